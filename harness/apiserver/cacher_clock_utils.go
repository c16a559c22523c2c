//go:build !apiserver_pre23

package main

import (
	"time"

	"k8s.io/utils/clock"
)

// movedRealClock is cacherClock as the cacher takes it from v0.23: k8s.io/utils' clock.
type movedRealClock struct {
	clock.RealClock
	m *movedClock
}

func (c movedRealClock) Now() time.Time                  { return c.m.now() }
func (c movedRealClock) Since(t time.Time) time.Duration { return c.m.now().Sub(t) }
func (c movedRealClock) NewTimer(d time.Duration) clock.Timer {
	return c.m.timer(c.RealClock.NewTimer(d), d)
}
