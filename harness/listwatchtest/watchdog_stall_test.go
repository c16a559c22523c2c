package listwatchtest

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// spinUntil reads a closed channel in a loop until stop is set: the busy loop of a consumer that
// does not see its watch end.
func spinUntil(ch <-chan int, stop *atomic.Bool) {
	for !stop.Load() {
		<-ch
	}
}

// The stall of a bubble names its busy loop and its goroutine blocked on a mutex, not the goroutines
// durably blocked.
func TestStalledNamesTheBusyLoopAndTheLock(t *testing.T) {
	var stop atomic.Bool
	var mu sync.Mutex
	mu.Lock()
	seen := make(chan stall, 1)
	go func() { // outside the bubble, on the real clock
		time.Sleep(200 * time.Millisecond)
		seen <- stalled(allStacks())
		stop.Store(true)
		mu.Unlock()
	}()
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		close(ch)
		go spinUntil(ch, &stop)
		go func() {
			mu.Lock()
			mu.Unlock()
		}()
		sleeping := make(chan struct{})
		go func() { <-sleeping }() // durably blocked: not part of the stall
		synctest.Wait()
		close(sleeping)
	})
	st := <-seen
	if len(st.spinning) != 1 || !strings.Contains(st.spinning[0], "listwatchtest.spinUntil at watchdog_stall_test.go:") {
		t.Fatalf("spinning: %q", st.spinning)
	}
	if len(st.blocked) != 1 || !strings.Contains(st.blocked[0], "(sync.Mutex.Lock) in listwatchtest.TestStalledNamesTheBusyLoopAndTheLock") {
		t.Fatalf("blocked: %q", st.blocked)
	}
	if key, _ := st.report(); key != "spinning" {
		t.Fatalf("reported as %s", key)
	}
}
