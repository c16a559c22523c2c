package shim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// indexerInformer is what cache.NewIndexerInformer returns, an indexer and the controller that fills
// it, seen as the harness reads an informer: the non-shared informer of code written before
// SharedInformerFactory, or that wants one handler and no factory. Its handler runs inside the
// controller's Pop, so a notification comes out only after the indexer holds what it names.
type indexerInformer struct {
	indexer    cache.Indexer
	controller cache.Controller
}

func (i *indexerInformer) LastSyncResourceVersion() string {
	return i.controller.LastSyncResourceVersion()
}

func (i *indexerInformer) HasSynced() bool { return i.controller.HasSynced() }

func (i *indexerInformer) GetStore() cache.Store { return i.indexer }

// beginIndexerInformer starts cache.NewIndexerInformer over lw with the program's handler, and the
// waiters on the controller's HasSynced.
func (s *session) beginIndexerInformer(lw *cache.ListWatch, waiters int) {
	h := s.handler()
	indexer, controller := cache.NewIndexerInformer(lw, &corev1.ConfigMap{}, resyncPeriod,
		cache.ResourceEventHandlerFuncs{AddFunc: h.added, UpdateFunc: h.updated, DeleteFunc: h.deleted},
		cache.Indexers{})
	s.view = &indexerInformer{indexer: indexer, controller: controller}
	go controller.Run(s.stop)
	s.startWaiters(waiters, controller.HasSynced)
}
