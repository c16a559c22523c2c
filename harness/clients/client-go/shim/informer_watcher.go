package shim

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"listwatch.dev/listwatchtest"
)

// informerWatchConsumer reads tools/watch's NewIndexerInformerWatcher as UntilWithSync and its users
// do: an informer (NewIndexerInformer) whose handler turns what it is told into watch events, a
// watch.Interface that never ends while the informer relists underneath. The consumer keeps the
// objects the events name, as a caller that waits on conditions over them does; that is the cache the
// harness judges, with the informer's RV and HasSynced. A relist's delete with final state unknown
// comes out as a plain DELETED of the last object known (the informer watcher unwraps it).
type informerWatchConsumer struct {
	cache.Controller // the informer's RV and HasSynced
	watcher          watch.Interface
	store            cache.Store
}

func (i *informerWatchConsumer) GetStore() cache.Store { return i.store }

// stop stops the watcher, which stops its informer; the bubble waits for the informer's goroutines
// to end once its requests do.
func (i *informerWatchConsumer) stop() { i.watcher.Stop() }

// beginInformerWatcher starts NewIndexerInformerWatcher over lw, its consumer, and the waiters on the
// informer's HasSynced (UntilWithSync waits on it before its precondition).
func runInformerWatcher(env *listwatchtest.Env) error {
	if !zeroResyncInBubble {
		return errors.New("mode informer-watcher needs client-go v0.35 or later: before it NewIndexerInformerWatcher's reflector (resync period 0) waits on a channel made at package init, which no synctest bubble can see")
	}
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	_, controller, w, _ := watchtools.NewIndexerInformerWatcher(lw, &corev1.ConfigMap{})
	c := &informerWatchConsumer{Controller: controller, watcher: w, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	env.Show(c)
	env.OnStop(c.stop)
	env.Go(func() {
		for {
			// The watcher's channel is never closed (Stop closes only its stop channel), so the
			// consumer also stops with the caller, as UntilWithoutRetry stops with its context.
			var ev watch.Event
			select {
			case ev = <-w.ResultChan():
			case <-env.Stop:
				return
			}
			consume(env, c.store, ev)
		}
	})
	env.StartWaiters(env.WaitForCacheSync(controller.HasSynced))
	return nil
}
