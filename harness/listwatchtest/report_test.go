package listwatchtest

import (
	"strings"
	"testing"
)

// TestKnownPropertiesAreLoggedNotFailed: a property in Campaign.Known is logged with why, once, with
// its other seeds counted; every other property fails the test.
func TestKnownPropertiesAreLoggedNotFailed(t *testing.T) {
	failures := []Failure{
		{Property: "no-needless-relist", Seed: 5, Detail: "d1", Trace: "/t/a.json", Steps: 6},
		{Property: "no-needless-relist", Seed: 6},
		{Property: "converges", Seed: 7, Detail: "d2", Trace: "/t/b.json", Steps: 9},
		{Property: "converges", Seed: 9},
	}
	c := Campaign{Known: map[string]string{"no-needless-relist": "client-go's"}}
	failed, logged := c.report(failures)
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "converges broken by seed 7 (and 1 more seeds: [9]): d2") {
		t.Fatalf("failed: %q", failed)
	}
	if len(logged) != 1 || !strings.HasPrefix(logged[0], "no-needless-relist broken by seed 5 (and 1 more seeds: [6]), known (client-go's): d1") {
		t.Fatalf("logged: %q", logged)
	}
	failed, logged = Campaign{}.report(failures)
	if len(failed) != 2 || len(logged) != 0 {
		t.Fatalf("with nothing known every property fails: failed %q, logged %q", failed, logged)
	}
}
