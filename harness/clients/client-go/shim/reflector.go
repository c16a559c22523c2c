package shim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// bareReflector is a Reflector into a plain Store, as code that keeps a cache of its own without an
// informer builds it (cache.NewReflector(lw, &corev1.ConfigMap{}, store, 0) and Run): no DeltaFIFO, no
// handlers, and nothing that says when it has listed, so the harness judges its cache and its requests
// only.
type bareReflector struct {
	reflector *cache.Reflector
	store     cache.Store
}

func (b *bareReflector) LastSyncResourceVersion() string {
	return b.reflector.LastSyncResourceVersion()
}

// HasSynced: a bare Reflector has none; nobody waits for it.
func (b *bareReflector) HasSynced() bool { return false }

func (b *bareReflector) GetStore() cache.Store { return b.store }

// runReflector starts a bare Reflector into a Store.
func runReflector(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflector(lw, &corev1.ConfigMap{}, store, resyncPeriod(env))
	env.Show(&bareReflector{reflector: r, store: store})
	go r.Run(env.Stop)
	return nil
}
