package clustermanager

import (
	"context"
	"testing"

	"listwatch.dev/listwatchtest"
)

// manager registers a Manager whose requests run get, its locks and waits traced.
func manager(get func(*Manager, context.Context, string) error) listwatchtest.Manager {
	return func(env *listwatchtest.ManagerEnv) (listwatchtest.Request, error) {
		m := New(env.ConfigFor, env.Namespace, env.Stop)
		m.Trace = Trace{
			Locked: func(ctx context.Context, write bool) {
				mode := listwatchtest.Read
				if write {
					mode = listwatchtest.Write
				}
				env.Locked(ctx, mode)
			},
			Unlocked: env.Unlocked,
			Waiting:  env.Waiting,
			Waited:   env.Waited,
		}
		return func(ctx context.Context, cluster string) error { return get(m, ctx, cluster) }, nil
	}
}

func get(m *Manager, ctx context.Context, cluster string) error {
	_, err := m.Get(ctx, cluster)
	return err
}

func getHoldingLock(m *Manager, ctx context.Context, cluster string) error {
	_, err := m.GetHoldingLock(ctx, cluster)
	return err
}

func getWaitingUnbounded(m *Manager, ctx context.Context, cluster string) error {
	_, err := m.GetWaitingUnbounded(ctx, cluster)
	return err
}

// TestManager: the fixed manager holds every property, on 2,000 seeds (each a world of two or three
// clusters and up to four requests, a cluster unreachable once or twice).
func TestManager(t *testing.T) {
	listwatchtest.RunManager(t, manager(get), listwatchtest.Campaign{Seeds: 2000})
}

// campaign is the buggy manager's: every seed breaks it at its start, and each takes a fraction of a
// second of real time (the watchdog's two looks at the stalled bubble).
var campaign = listwatchtest.Campaign{Seeds: 5}

// TestHoldingLock serves the manager as it first shipped; TestHoldingLockIsCaught runs it and
// expects listwatch to find what the model's flaw sync-under-lock breaks.
func TestHoldingLock(t *testing.T) {
	if testing.Short() {
		t.Skip("the manager fails: run by TestHoldingLockIsCaught")
	}
	listwatchtest.RunManager(t, manager(getHoldingLock), campaign)
}

// TestWaitingUnbounded serves the manager whose wait is outside the lock but has no bound;
// TestWaitingUnboundedIsCaught expects what the model's flaw sync-wait-unbounded breaks.
func TestWaitingUnbounded(t *testing.T) {
	if testing.Short() {
		t.Skip("the manager fails: run by TestWaitingUnboundedIsCaught")
	}
	listwatchtest.RunManager(t, manager(getWaitingUnbounded), listwatchtest.Campaign{Seeds: 100})
}

func TestHoldingLockIsCaught(t *testing.T) {
	expect(t, "TestHoldingLock", campaign, "no-lock-across-unbounded-wait")
}

func TestWaitingUnboundedIsCaught(t *testing.T) {
	expect(t, "TestWaitingUnbounded", listwatchtest.Campaign{Seeds: 100}, "requests-answered")
}

// expect runs test's campaign and fails unless property is broken with a shrunk trace.
func expect(t *testing.T, test string, c listwatchtest.Campaign, property string) {
	c.Manager = true
	failures, err := listwatchtest.Simulate(test, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		if f.Property == property && f.Trace != "" {
			t.Logf("found as expected: seed %d, %s (trace %s)", f.Seed, f.Detail, f.Trace)
			return
		}
	}
	t.Fatalf("%s not broken; failures: %+v", property, failures)
}
