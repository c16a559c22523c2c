//go:build !clientgo_pre35

package shim

import (
	"time"

	"listwatch.dev/listwatchtest"
)

// resyncPeriod is the informer's resync period: the configuration's (`,resync=`), or none. client-go
// v0.35 and later wait on a nil channel for a resync that never comes.
func resyncPeriod(env *listwatchtest.Env) time.Duration { return env.Resync }

// zeroResyncInBubble: a Reflector built with resync period 0 inside a bubble waits only on what the
// bubble can see, so tools that fix the period at 0 (NewIndexerInformerWatcher) can run.
const zeroResyncInBubble = true
