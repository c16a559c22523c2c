package shim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
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

// beginReflector starts a bare Reflector over lw into a Store.
func (s *session) beginReflector(lw *cache.ListWatch) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflector(lw, &corev1.ConfigMap{}, store, resyncPeriod)
	s.view = &bareReflector{reflector: r, store: store}
	s.ready = []bool{}
	s.waitStart = time.Now()
	go r.Run(s.stop)
}
