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
