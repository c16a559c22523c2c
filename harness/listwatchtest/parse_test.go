package listwatchtest

import (
	"testing"
	"time"
)

func TestCutNeedsALongerLength(t *testing.T) {
	if _, err := parse([]byte(`{"cmd":"cut","status":200,"body":"abc","length":3}`)); err == nil {
		t.Fatal("a cut whose length does not exceed its body was accepted")
	}
}

func TestCampaignOptionsSpellTheClientSpec(t *testing.T) {
	c := Campaign{Waiters: 2, Timeout: 30 * time.Second, Resync: 10 * time.Second, Handlers: 3, SlowHandler: true, WatchErrorHandler: true}
	got := c.clientSpec("/src/myctl", "TestMine")
	want := "go:/src/myctl,test=TestMine,waiters=2,timeout=30s,resync=10s,handlers=3,slow-handler,watch-error-handler"
	if got != want {
		t.Fatalf("spec %q, want %q", got, want)
	}
	if got := (Campaign{Handlers: 1}).clientSpec("d", "T"); got != "go:d,test=T" {
		t.Fatalf("the defaults add nothing: %q", got)
	}
}
