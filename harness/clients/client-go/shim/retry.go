package shim

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"listwatch.dev/listwatchtest"
)

// retryInitialRV is where the RetryWatcher starts: the wire's first revision, so that it gets every
// event of the world from its empty start (a RetryWatcher never lists, and refuses "" and "0").
const retryInitialRV = "1"

// retryConsumer reads client-go's RetryWatcher (tools/watch) as its users do: a raw watch that the
// RetryWatcher resumes from the last RV it saw, with no LIST. Each event goes into a store of the
// consumer's own and to the harness as a notification; when the RetryWatcher's channel closes (it
// gives up: a 410 on an open watch is terminal), the consumer returns, as a loop over a channel
// does. It never syncs: there is no list to sync from.
type retryConsumer struct {
	watcher *watchtools.RetryWatcher
	mu      sync.Mutex
	rv      string
	store   cache.Store
}

func (r *retryConsumer) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rv
}

func (r *retryConsumer) HasSynced() bool { return false }

func (r *retryConsumer) GetStore() cache.Store { return r.store }

// runRetry starts a RetryWatcher and its consumer (no page size: a RetryWatcher never lists).
func runRetry(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	w, err := watchtools.NewRetryWatcher(retryInitialRV, lw)
	if err != nil {
		return err
	}
	r := &retryConsumer{watcher: w, rv: retryInitialRV, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	env.Show(r)
	env.OnStop(w.Stop)
	env.Go(func() {
		for ev := range w.ResultChan() {
			// An ERROR event (the RetryWatcher gave up, and closes the channel next) is no object.
			if cm, ok := consume(env, r.store, ev); ok {
				r.mu.Lock()
				r.rv = cm.ResourceVersion
				r.mu.Unlock()
			}
		}
	})
	return nil
}

// consume is a watch consumer's step, for the consumers of tools/watch: an event's object goes into
// the consumer's store and to the harness as the notification it is to the consumer (an ADDED or
// MODIFIED of a key it holds is an update from what it held). False for an event with no ConfigMap.
func consume(env *listwatchtest.Env, store cache.Store, ev watch.Event) (*corev1.ConfigMap, bool) {
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok {
		return nil, false
	}
	old, had, _ := store.Get(cm)
	switch ev.Type {
	case watch.Added, watch.Modified:
		_ = store.Update(cm)
		if had {
			env.Updated(old, cm)
		} else {
			env.Added(cm)
		}
	case watch.Deleted:
		_ = store.Delete(cm)
		env.Deleted(cm)
	}
	return cm, true
}
