package listwatchtest

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// recoveredPanics is what the process-wide panic handler knows of the session running: whether it
// asked for a handler that panics (Env.PanicOnce), and how many panics client-go recovered since.
type recoveredPanics struct {
	expected atomic.Bool
	seen     atomic.Int32
}

var handlerPanics recoveredPanics

// expect starts (on) or ends (off) a session; panics are expected only in one that asked for them.
func (p *recoveredPanics) expect(on bool) {
	p.expected.Store(on)
	p.seen.Store(0)
}

// listenerFrame is the function of client-go's goroutine that calls one handler: after a panic it
// recovered, it sleeps a second before the next notification (tools/cache/shared_informer.go,
// processorListener.run, with utilruntime.ReallyCrash false).
const listenerFrame = "k8s.io/client-go/tools/cache.(*processorListener).run("

// listenerSleeps are the handler goroutines of the client waiting out that sleep: a timer that no
// clock of the client's shows, found in the goroutines' stacks, each due its sleep's duration after
// the command during which it was first seen asleep (the fake clock moves only between commands).
type listenerSleeps struct {
	due map[string]time.Time // goroutine id: when its sleep ends
}

// next is when the first of them wakes, if any sleeps; only looked for once a panic was recovered.
func (l *listenerSleeps) next(now time.Time) (time.Time, bool) {
	if handlerPanics.seen.Load() == 0 {
		l.due = nil
		return time.Time{}, false
	}
	asleep := sleepingListeners()
	due := make(map[string]time.Time, len(asleep))
	var first time.Time
	for id, d := range asleep {
		at, ok := l.due[id]
		if !ok {
			at = now.Add(d)
		}
		due[id] = at
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	l.due = due
	return first, !first.IsZero()
}

// sleepingListeners reads every goroutine's stack (as the watchdog does) and returns those of the
// handler goroutines in time.Sleep, by goroutine id, with the duration they sleep (time.Sleep's
// argument, in hex).
func sleepingListeners() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, block := range strings.Split(allStacks(), "\n\n") {
		header, rest, _ := strings.Cut(strings.TrimSpace(block), "\n")
		m := goroutineHeader.FindStringSubmatch(header)
		if m == nil || !strings.HasPrefix(m[2], "sleep") || !strings.Contains(rest, listenerFrame) {
			continue
		}
		_, arg, ok := strings.Cut(rest, "time.Sleep(")
		if !ok {
			continue
		}
		arg, _, _ = strings.Cut(arg, ")")
		ns, err := strconv.ParseInt(strings.TrimPrefix(arg, "0x"), 16, 64)
		if err != nil {
			continue
		}
		out[m[1]] = time.Duration(ns)
	}
	return out
}
