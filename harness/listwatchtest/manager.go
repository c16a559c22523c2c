package listwatchtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A Manager starts code that serves its callers from the caches of several clusters (a
// multi-cluster client manager: one informer per cluster, created on a cluster's first request)
// and returns the function that serves one caller's request. It runs once per seed, inside a
// testing/synctest bubble, as a [Client] does: its only way out is env.ConfigFor, its clock is the
// bubble's, and it must stop once env.Context is done.
//
// listwatch then makes env.Requests requests at once, request i for cluster env.Clusters[i %
// len(env.Clusters)], each on a goroutine of its own with a context that ends at the caller's
// deadline (env.Deadline after the start). It decides when each cluster's first list is answered,
// makes a cluster unreachable (its lists are never answered) and lets time pass, and judges what
// the code showed:
//   - requests-answered: every request returns, with nil (served) or an error, within a minute;
//   - no-lock-across-unbounded-wait: no request holds a lock while it waits with no bound, as the
//     code shows through [ManagerEnv.Locked], [ManagerEnv.Unlocked], [ManagerEnv.Waiting] and
//     [ManagerEnv.Waited].
//
// A request blocked on a sync.Mutex or sync.RWMutex keeps the bubble from ever going still: Run
// turns that into a verdict naming which request waits on a lock where, which one holds it, and
// what that one waits for.
type Manager func(env *ManagerEnv) (Request, error)

// Request serves one caller's request for cluster's cache: nil once it can serve from it, an error
// when it cannot (its context ended first, say).
type Request func(ctx context.Context, cluster string) error

// LockMode is which side of a read/write lock a request holds.
type LockMode int

const (
	Read LockMode = iota
	Write
)

func (m LockMode) String() string {
	if m == Write {
		return "write"
	}
	return "read"
}

// ManagerEnv is one seed's world as a [Manager] sees it. Its tracing methods (Locked, Unlocked,
// Waiting, Waited) take the context of the request they are about, or one derived from it; any
// goroutine may call them.
type ManagerEnv struct {
	// Clusters names the clusters requests ask for ("cluster-0", "cluster-1", ...).
	Clusters []string
	// Requests is how many requests listwatch makes, all at once.
	Requests int
	// Deadline is how long after the start each request's context ends.
	Deadline time.Duration
	// Namespace is where each cluster's objects live: every cluster serves ConfigMaps there, none
	// at first.
	Namespace string
	// Context is done when the seed's run stops; so is Stop closed.
	Context context.Context
	Stop    <-chan struct{}

	s *managerSession
}

// ConfigFor is the config that reaches cluster, over a transport of listwatch's own, in JSON. An
// unknown cluster is an error.
func (e *ManagerEnv) ConfigFor(cluster string) (*rest.Config, error) {
	for k, name := range e.Clusters {
		if name == cluster {
			return e.s.config(k), nil
		}
	}
	return nil, fmt.Errorf("listwatchtest: no cluster %q (the clusters are %v)", cluster, e.Clusters)
}

// Locked tells listwatch that ctx's request took the lock in mode.
func (e *ManagerEnv) Locked(ctx context.Context, mode LockMode) { e.s.locked(ctx, &mode) }

// Unlocked tells listwatch that ctx's request released the lock it held.
func (e *ManagerEnv) Unlocked(ctx context.Context) { e.s.locked(ctx, nil) }

// Waiting tells listwatch that ctx's request waits for cluster's cache to sync until stop closes,
// as cache.WaitForCacheSync(stop, ...) does. The wait is bounded when stop is ctx.Done() and ctx
// has a deadline (the request's, or a shorter one derived from it); any other stop channel (the
// manager's own, never closed while it runs) bounds nothing.
func (e *ManagerEnv) Waiting(ctx context.Context, cluster string, stop <-chan struct{}) {
	e.s.waiting(ctx, cluster, stop)
}

// Waited tells listwatch that ctx's request no longer waits.
func (e *ManagerEnv) Waited(ctx context.Context) { e.s.waited(ctx) }

// RunManager runs manager through the campaign, as [Run] runs a client, and fails t for each
// property broken with its seed and trace file. Each seed's world has a manager with two or three
// clusters and up to four requests, and draws its faults among clusters that become unreachable;
// the campaign's Waiters, Timeout, Resync, Handlers, SlowHandler and WatchErrorHandler do not apply.
func RunManager(t *testing.T, manager Manager, c Campaign) {
	t.Helper()
	if os.Getenv(serveEnv) == t.Name() {
		serveOn(t, served{manager: manager})
		return
	}
	c.Manager = true
	failures, err := Simulate(t.Name(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.tell(t, failures)
}
