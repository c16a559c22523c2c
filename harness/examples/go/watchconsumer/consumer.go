// Package watchconsumer is the code of seed 003, as it was written: a consumer of a raw
// watch.Interface that keeps the ConfigMaps of one namespace from one LIST and then one WATCH. A
// watch's result channel closes whenever the API server ends the watch (its timeout, a restart) or
// the connection dies, and the consumer goes wrong in one of two ways:
//
//   - [Consumer.RunStopping] ranges over the channel and returns when it closes: the cache freezes,
//     and nothing says so;
//   - [Consumer.RunSpinning] selects on the channel in a loop, and a closed channel is always ready:
//     a busy loop that takes a core and learns nothing.
//
// The fix is to watch again from the last RV seen, with a backoff, and to relist after 410 Gone:
// the reflector of package rvresume does that.
package watchconsumer

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Consumer keeps the ConfigMaps of one namespace in a store.
type Consumer struct {
	client  typedcorev1.ConfigMapInterface
	handler cache.ResourceEventHandler
	store   cache.Store

	mu     sync.Mutex
	rv     string
	synced bool
}

// New is a consumer of client's ConfigMaps that tells handler of each change.
func New(client typedcorev1.ConfigMapInterface, handler cache.ResourceEventHandler) *Consumer {
	return &Consumer{client: client, handler: handler, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

// GetStore is the consumer's cache.
func (c *Consumer) GetStore() cache.Store { return c.store }

// LastSyncResourceVersion is the RV of the last LIST or event applied.
func (c *Consumer) LastSyncResourceVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rv
}

// HasSynced says whether the LIST is in the store.
func (c *Consumer) HasSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced
}

// RunStopping lists, watches, and returns when the watch's channel closes.
func (c *Consumer) RunStopping(ctx context.Context) {
	w := c.start(ctx)
	if w == nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		c.apply(ev)
	}
}

// RunSpinning lists, watches, and reads the watch's channel until ctx is done, closed or not.
func (c *Consumer) RunSpinning(ctx context.Context) {
	w := c.start(ctx)
	if w == nil {
		return
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-w.ResultChan():
			c.apply(ev)
		}
	}
}

// start lists (retrying each second until a LIST succeeds) and opens a watch from the LIST's RV;
// nil once ctx is done or if the watch is refused.
func (c *Consumer) start(ctx context.Context) watch.Interface {
	for {
		list, err := c.client.List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range list.Items {
				c.apply(watch.Event{Type: watch.Added, Object: &list.Items[i]})
			}
			c.mu.Lock()
			c.rv, c.synced = list.ResourceVersion, true
			c.mu.Unlock()
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	w, err := c.client.Watch(ctx, metav1.ListOptions{ResourceVersion: c.LastSyncResourceVersion()})
	if err != nil {
		return nil
	}
	return w
}

// apply puts an event's ConfigMap into the store and tells the handler; other events are ignored.
func (c *Consumer) apply(ev watch.Event) {
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok {
		return
	}
	old, had, _ := c.store.Get(cm)
	switch ev.Type {
	case watch.Added, watch.Modified:
		_ = c.store.Update(cm)
		if had {
			c.handler.OnUpdate(old, cm)
		} else {
			c.handler.OnAdd(cm, false)
		}
	case watch.Deleted:
		if had {
			_ = c.store.Delete(old)
			c.handler.OnDelete(cm)
		}
	}
	c.mu.Lock()
	c.rv = cm.ResourceVersion
	c.mu.Unlock()
}
