package shim

import (
	"testing"
	"testing/synctest"
	"time"
)

// A timer the harness was not told of, firing before the reported one, halts the session.
func TestHiddenTimerHalts(t *testing.T) {
	setup()
	synctest.Test(t, func(t *testing.T) {
		s := &session{}
		if err := s.begin(command{Cmd: "start", TimeoutMs: 1000}); err != nil {
			t.Fatal(err)
		}
		r := s.reply(nil)
		if r.Timer == nil || r.Timer.Kind != "request-timeout" || r.Timer.AfterMs != 1000 {
			t.Fatalf("timer %+v", r.Timer)
		}
		go func() { // a timer client-go might have and the shim cannot see
			time.Sleep(300 * time.Millisecond)
			s.mu.Lock()
			s.act()
			s.mu.Unlock()
		}()
		r = s.reply(s.apply(command{Cmd: "fire", Ms: 1000}))
		if r.Halted == nil {
			t.Fatal("not halted")
		}
		t.Log(*r.Halted)
		s.shutdown()
	})
}
