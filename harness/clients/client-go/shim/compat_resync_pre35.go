//go:build clientgo_pre35

package shim

import (
	"time"

	"listwatch.dev/listwatchtest"
)

// resyncPeriod is the informer's resync period: the configuration's (`,resync=`), or none. Before
// v0.35, a reflector with no resync period waits on neverExitWatch, a channel made at package init,
// outside every bubble: synctest.Wait never returns while a goroutine waits on it. For none, a
// period no session reaches (200 years of fake time) puts a bubble timer there instead; it never
// fires, so nothing observable changes.
func resyncPeriod(env *listwatchtest.Env) time.Duration {
	if env.Resync > 0 {
		return env.Resync
	}
	return 200 * 365 * 24 * time.Hour
}

// zeroResyncInBubble: a Reflector built with resync period 0 waits on neverExitWatch, which no
// bubble can see, so tools that fix the period at 0 (NewIndexerInformerWatcher) cannot run here.
const zeroResyncInBubble = false
