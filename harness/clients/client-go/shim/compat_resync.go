//go:build !clientgo_pre35

package shim

import "time"

// resyncPeriod is the informer's resync period: none. client-go v0.35 and later wait on a nil
// channel for a resync that never comes.
const resyncPeriod time.Duration = 0
