package listwatchtest

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// listing is a manager whose requests each list their cluster once, waiting under lock when
// underLock (with no bound) and outside it otherwise (bounded by the request's context).
func listing(underLock bool) Manager {
	return func(env *ManagerEnv) (Request, error) {
		var mu sync.Mutex
		return func(ctx context.Context, cluster string) error {
			config, err := env.ConfigFor(cluster)
			if err != nil {
				return err
			}
			list := func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, config.Host+configMapsPath, nil)
				resp, err := (&http.Client{Transport: config.Transport}).Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			if underLock {
				mu.Lock()
				env.Locked(ctx, Write)
				defer func() { env.Unlocked(ctx); mu.Unlock() }()
				env.Waiting(ctx, cluster, env.Stop)
				defer env.Waited(ctx)
				return list(env.Context)
			}
			env.Waiting(ctx, cluster, ctx.Done())
			defer env.Waited(ctx)
			return list(ctx)
		}, nil
	}
}

// A manager's requests show their waits and how they end: a synced cluster's request is served, an
// unreachable one's fails at its deadline.
func TestManagerSessionTracesRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &managerSession{}
		if err := s.begin(managerStart{Clusters: 2, Requests: 2, WaitMs: 30000}, listing(false)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		r, err := s.reply()
		if err != nil {
			t.Fatal(err)
		}
		if !r.Listing[0] || !r.Listing[1] || r.Requests[0].Wait == nil || r.Requests[0].Wait.BoundMs == nil || *r.Requests[0].Wait.BoundMs != 30000 {
			t.Fatalf("at the start: %+v", r)
		}
		if err := s.sync(0); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		r, _ = s.reply()
		if r.Requests[0].Outcome != "served" || r.Requests[1].Outcome != "failed" || r.Requests[0].Wait != nil {
			t.Fatalf("after a sync and the deadline: %+v", r)
		}
		if err := s.sync(0); err == nil {
			t.Fatal("a second sync of a cluster no list waits on was taken")
		}
		s.shutdown()
	})
}

// A wait on a channel other than the request's context's bounds nothing; tracing with a context
// that is no request's is the client's error.
func TestManagerSessionJudgesTheBoundAndTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &managerSession{}
		if err := s.begin(managerStart{Clusters: 1, Requests: 1, WaitMs: 30000}, listing(true)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		r, _ := s.reply()
		if r.Requests[0].Held != "write" || r.Requests[0].Wait == nil || r.Requests[0].Wait.BoundMs != nil {
			t.Fatalf("under the lock: %+v", r.Requests[0])
		}
		s.locked(context.Background(), nil)
		if _, err := s.reply(); err == nil || !strings.Contains(err.Error(), "no request's") {
			t.Fatalf("a foreign context: %v", err)
		}
		s.shutdown()
	})
}

// A stall on the manager's lock is explained by who waits and who holds it, waiting on what.
func TestManagerStallNamesTheWaiterAndTheHolder(t *testing.T) {
	setup()
	release := make(chan struct{}) // outside the bubble: a wait on it is no durable one
	var mu sync.Mutex
	holding := func(env *ManagerEnv) (Request, error) {
		return func(ctx context.Context, cluster string) error {
			mu.Lock()
			env.Locked(ctx, Write)
			defer func() { env.Unlocked(ctx); mu.Unlock() }()
			env.Waiting(ctx, cluster, release)
			<-release
			return nil
		}, nil
	}
	sessions := make(chan *managerSession, 1)
	seen := make(chan string, 1)
	go func() { // the watchdog's look, outside the bubble, on the real clock
		s := <-sessions
		time.Sleep(200 * time.Millisecond)
		why, _ := s.explain(stalled(allStacks()))
		seen <- why
		close(release)
	}()
	synctest.Test(t, func(t *testing.T) {
		s := &managerSession{}
		if err := s.begin(managerStart{Clusters: 2, Requests: 2, WaitMs: 30000}, holding); err != nil {
			t.Fatal(err)
		}
		sessions <- s
		s.running.Wait()
		s.shutdown()
	})
	why := <-seen
	for _, want := range []string{
		`request-\d waits for a lock: goroutine \d+ \(sync.Mutex.Lock\) in listwatchtest.TestManagerStallNamesTheWaiterAndTheHolder`,
		`request-\d holds the write lock since 0s, waiting with no bound for cluster-\d since 0s`, // its code is this package's: no frame of its own
	} {
		if !regexp.MustCompile(want).MatchString(why) {
			t.Fatalf("%q does not say %q", why, want)
		}
	}
}
