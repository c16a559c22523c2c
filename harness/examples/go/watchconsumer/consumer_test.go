package watchconsumer

import (
	"context"
	"testing"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"listwatch.dev/listwatchtest"
)

// client registers a consumer that runs run as listwatch's client under test.
func client(run func(*Consumer, context.Context)) listwatchtest.Client {
	return func(env *listwatchtest.Env) error {
		cs, err := typedcorev1.NewForConfig(env.Config)
		if err != nil {
			return err
		}
		c := New(cs.ConfigMaps(env.Namespace), env.Handler())
		env.Show(c)
		env.Go(func() { run(c, env.Context) })
		env.StartWaiters(env.WaitForCacheSync(c.HasSynced))
		return nil
	}
}

// campaign: the first 30 seeds, each with the faults that end a watch.
var campaign = listwatchtest.Campaign{Seeds: 30, FaultKinds: []string{"disconnect", "server-timeout"}}

// TestStopping and TestSpinning serve the two consumers; the tests below run them and expect
// listwatch to find what the model's flaws stop-on-close and spin-on-close break.
func TestStopping(t *testing.T) {
	if testing.Short() {
		t.Skip("the consumer fails: run by TestStoppingIsCaught")
	}
	listwatchtest.Run(t, client((*Consumer).RunStopping), campaign)
}

func TestSpinning(t *testing.T) {
	if testing.Short() {
		t.Skip("the consumer fails: run by TestSpinningIsCaught")
	}
	listwatchtest.Run(t, client((*Consumer).RunSpinning), campaign)
}

func TestStoppingIsCaught(t *testing.T) { expect(t, "TestStopping", "converges") }

func TestSpinningIsCaught(t *testing.T) { expect(t, "TestSpinning", "no-busy-loop") }

// expect runs test's campaign and fails unless property is broken with a shrunk trace.
func expect(t *testing.T, test, property string) {
	failures, err := listwatchtest.Simulate(test, campaign)
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
