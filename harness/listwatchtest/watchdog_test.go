package listwatchtest

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A command that takes too long in real time is reported as stuck, and the process exits 3.
func TestWatchdog(t *testing.T) {
	var out bytes.Buffer
	code := make(chan int, 1)
	o := &output{w: &out}
	w := &watchdog{limit: 200 * time.Millisecond, out: o, exit: func(c int) { code <- c }}
	go w.run()
	w.begin("fire")
	select {
	case c := <-code:
		if c != 3 || !strings.HasPrefix(out.String(), `{"stuck":"fire: `) {
			t.Fatalf("exit %d, %q", c, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watchdog did not fire")
	}
}

// The frame a lock's holder is in is its own code's, past client-go's and the runtime's.
func TestOwnFrameSkipsLibraries(t *testing.T) {
	frames := []string{
		"runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)", "\t/usr/local/go/src/runtime/proc.go:460 +0xce",
		"k8s.io/apimachinery/pkg/util/wait.PollImmediateUntil(...)", "\t/m/k8s.io/apimachinery/pkg/util/wait/poll.go:70",
		"k8s.io/client-go/tools/cache.WaitForCacheSync(0xc0001, {0xc0002, 0x1, 0x1})", "\t/m/k8s.io/client-go/tools/cache/shared_informer.go:330 +0x4d",
		"example.com/mgr.(*Manager).Get(0xc0003, {0x1, 0x2}, {0x3, 0x9})", "\t/src/mgr/manager.go:42 +0x1a5",
		"created by example.com/mgr.Start in goroutine 7", "\t/src/mgr/start.go:9 +0x6e",
	}
	if got := ownFrame(frames); got != "mgr.(*Manager).Get at manager.go:42" {
		t.Fatalf("ownFrame: %q", got)
	}
	if got := ownFrame(frames[:6]); got != "" {
		t.Fatalf("ownFrame of library frames only: %q", got)
	}
}

// A busy loop stopped inside an inlined sync/atomic call is named by its own frame, not the atomic's.
func TestUserFrameSkipsAtomics(t *testing.T) {
	frames := []string{
		"sync/atomic.(*Bool).Load(...)", "\t/usr/local/go/src/sync/atomic/type.go:19",
		"example.com/ctl.spin(0xc0001, 0xc0002)", "\t/src/ctl/spin.go:12 +0x1d",
		"created by example.com/ctl.Start in goroutine 7", "\t/src/ctl/start.go:9 +0x6e",
	}
	if got := userFrame(frames); got != "ctl.spin at spin.go:12" {
		t.Fatalf("userFrame: %q", got)
	}
	if got := ownFrame(frames); got != "ctl.spin at spin.go:12" {
		t.Fatalf("ownFrame: %q", got)
	}
}
