package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// cacherClock is the cacher's clock (cacher.Config.Clock): real time, moved on by the minutes the run
// passes ("minute"), so that the cacher's heartbeat bookmarks (A8) come when the run asks for them.
// The timers it makes wait real time: only what the cacher reads off the clock moves.
var cacherClock = &movedClock{}

type movedClock struct {
	offset atomic.Int64 // nanoseconds added to real time
	ticks  atomic.Int64 // times the cacher's bookmark timer fired and was armed again
}

func (c *movedClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// isBookmarkTick tells the cacher's bookmark timer from its other timers by its period: a second with
// a quarter's jitter (wait.Jitter(time.Second, 0.25) in Cacher.dispatchEvents, v0.22.17 to v0.37.2);
// the others run 100 ms (the progress requester) or 15 s (the compactor's poll).
func isBookmarkTick(d time.Duration) bool {
	return d >= time.Second && d <= 1250*time.Millisecond
}

// timer is the Timer of both clock packages the cacher has taken (apimachinery's, k8s.io/utils').
type timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// timer returns the cacher's timer t of period d, counting its fires if it is the bookmark timer.
func (c *movedClock) timer(t timer, d time.Duration) timer {
	if !isBookmarkTick(d) {
		return t
	}
	return countedTimer{t, c}
}

// countedTimer counts the cacher's bookmark ticks: dispatchEvents arms its timer again each time it
// takes a fire.
type countedTimer struct {
	timer
	m *movedClock
}

func (t countedTimer) Reset(d time.Duration) bool {
	t.m.ticks.Add(1)
	return t.timer.Reset(d)
}

// minute moves the clock on by a minute and a second (defaultBookmarkFrequency and the bucket
// rounding), then waits until the cacher's bookmark timer fired twice: the second fire is taken only
// once the first one's dispatch ended, so every heartbeat then due sits in its watch's buffer. A little
// more real time lets the watches' goroutines send them on.
func (c *movedClock) minute(ctx context.Context) error {
	c.offset.Add(int64(61 * time.Second))
	from := c.ticks.Load()
	for c.ticks.Load() < from+2 {
		select {
		case <-ctx.Done():
			return errors.New("minute: the cacher's bookmark timer did not fire")
		case <-time.After(2 * time.Millisecond):
		}
	}
	time.Sleep(20 * time.Millisecond)
	return nil
}
