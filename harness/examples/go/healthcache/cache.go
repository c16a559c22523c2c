// Package healthcache is an informer cache of ConfigMaps that also tells a health check when it
// cannot reach the API server: every error its reflector hands the informer's watch error handler
// (a LIST that failed, a WATCH refused) goes to the check, as a controller's readiness probe or
// API-health metric would take it.
//
// [NewSettingHandlerLate] builds the same cache with a bug seen in controllers: it sets the watch
// error handler once the informer has started, and ignores the error SetWatchErrorHandler returns.
// An informer that has started refuses a handler ("informer has already started",
// tools/cache/shared_informer.go), so the check never hears of a failure and reports healthy while
// every LIST is refused. kubevirt's virt-controller set its handler after its informer factory's
// Start until kubevirt PR #8259 checked the error and moved the call before Start.
package healthcache

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Cache is a SharedIndexInformer whose failures go to a health check.
type Cache struct {
	informer cache.SharedIndexInformer
	health   func(error)
	late     bool
}

// New is a cache whose informer tells health of every error its reflector hands it. The handler is
// set before the informer runs, as SetWatchErrorHandler requires.
func New(lw cache.ListerWatcher, handler cache.ResourceEventHandler, health func(error)) (*Cache, error) {
	c := newCache(lw, handler, health)
	if err := c.informer.SetWatchErrorHandler(c.tell); err != nil {
		return nil, fmt.Errorf("setting the watch error handler: %w", err)
	}
	return c, nil
}

// NewSettingHandlerLate is the cache with the bug: Run sets the watch error handler only once the
// informer has started, and ignores the error that says it was refused.
func NewSettingHandlerLate(lw cache.ListerWatcher, handler cache.ResourceEventHandler, health func(error)) (*Cache, error) {
	c := newCache(lw, handler, health)
	c.late = true
	return c, nil
}

func newCache(lw cache.ListerWatcher, handler cache.ResourceEventHandler, health func(error)) *Cache {
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	if _, err := informer.AddEventHandler(handler); err != nil {
		// AddEventHandler fails only on an informer that has stopped; this one has not started.
		panic(err)
	}
	return &Cache{informer: informer, health: health}
}

func (c *Cache) tell(_ *cache.Reflector, err error) { c.health(err) }

// Run runs the informer until ctx is done.
func (c *Cache) Run(ctx context.Context) {
	go c.informer.Run(ctx.Done())
	if c.late {
		cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced)
		_ = c.informer.SetWatchErrorHandler(c.tell) // the bug: refused, since the informer started
	}
	<-ctx.Done()
}

// HasSynced is the informer's.
func (c *Cache) HasSynced() bool { return c.informer.HasSynced() }

// LastSyncResourceVersion is the informer's.
func (c *Cache) LastSyncResourceVersion() string { return c.informer.LastSyncResourceVersion() }

// GetStore is the informer's store.
func (c *Cache) GetStore() cache.Store { return c.informer.GetStore() }
