package shim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
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

// runIndexerInformer starts cache.NewIndexerInformer with the program's handler, and the waiters on
// the controller's HasSynced.
func runIndexerInformer(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	indexer, controller := cache.NewIndexerInformer(lw, &corev1.ConfigMap{}, resyncPeriod(env), env.Handler(), cache.Indexers{})
	env.Show(&indexerInformer{indexer: indexer, controller: controller})
	go controller.Run(env.Stop)
	env.StartWaiters(env.WaitForCacheSync(controller.HasSynced))
	return nil
}

// runStoreInformer starts cache.NewInformer with the program's handler, and the waiters on the
// controller's HasSynced: the same controller as NewIndexerInformer's over a plain Store, the oldest
// informer of client-go and the one its examples long showed.
func runStoreInformer(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	store, controller := cache.NewInformer(lw, &corev1.ConfigMap{}, resyncPeriod(env), env.Handler())
	env.Show(listwatchtest.StoreView(store, controller.LastSyncResourceVersion, controller.HasSynced))
	go controller.Run(env.Stop)
	env.StartWaiters(env.WaitForCacheSync(controller.HasSynced))
	return nil
}
