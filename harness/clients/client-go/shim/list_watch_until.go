//go:build clientgo_pre19

package shim

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"listwatch.dev/listwatchtest"
)

// untilCaller is a caller of tools/watch's ListWatchUntil (client-go v0.15–v0.18; PR #90855 removed
// it in v0.19) whose condition never holds: it keeps every object its condition is told of, as a
// caller waiting for a state of the world does, and stops when ListWatchUntil returns. That function
// makes one LIST with no resource version (a consistent read), tells the condition of each item as a
// synthetic ADDED, then calls Until from the list's RV: a RetryWatcher, for which an ERROR 410 is
// terminal. Any error, the LIST's included, is returned to the caller at once.
type untilCaller struct {
	mu     sync.Mutex
	rv     string // the list's RV once it succeeded, then the last watch event's
	synced bool   // the list succeeded: its items are the condition's next calls
	store  cache.Store
}

func (u *untilCaller) LastSyncResourceVersion() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rv
}

// HasSynced: the LIST ListWatchUntil made has returned; its items reach the condition before the
// program's goroutines settle, so the harness never sees the one without the other.
func (u *untilCaller) HasSynced() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.synced
}

func (u *untilCaller) GetStore() cache.Store { return u.store }

// runListWatchUntil calls ListWatchUntil over the world's ListWatch (no page size: it reads one
// LIST and follows no continue token) with the caller's condition, on a goroutine that returns
// when ListWatchUntil does. The waiters wait for the list, as a caller's own readiness would.
func runListWatchUntil(env *listwatchtest.Env) error {
	env.PageSize = 0
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	u := &untilCaller{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	// The list's RV, seen where the caller's ListWatch returns it (ListWatchUntil keeps it to
	// itself), and the first watch, before which the list's items have all reached the condition.
	list, watchFunc := lw.ListFunc, lw.WatchFunc
	watching := false // under u.mu: the RetryWatcher's goroutine sets it, the caller's reads it
	lw.ListFunc = func(o metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(o)
		if err == nil {
			if m, merr := meta.ListAccessor(obj); merr == nil {
				u.mu.Lock()
				u.rv, u.synced = m.GetResourceVersion(), true
				u.mu.Unlock()
			}
		}
		return obj, err
	}
	lw.WatchFunc = func(o metav1.ListOptions) (watch.Interface, error) {
		u.mu.Lock()
		watching = true
		u.mu.Unlock()
		return watchFunc(o)
	}
	env.Show(u)
	ctx, cancel := context.WithCancel(env.Context)
	env.OnStop(cancel)
	env.Go(func() {
		_, _ = watchtools.ListWatchUntil(ctx, lw, func(ev watch.Event) (bool, error) {
			// The list's synthetic ADDEDs carry their objects' own RVs, not the list's: only a
			// watch event moves the RV the caller claims.
			if cm, ok := consume(env, u.store, ev); ok {
				u.mu.Lock()
				if watching {
					u.rv = cm.ResourceVersion
				}
				u.mu.Unlock()
			}
			return false, nil
		})
	})
	env.StartWaiters(env.WaitForCacheSync(u.HasSynced))
	return nil
}
