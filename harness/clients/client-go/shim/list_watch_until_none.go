//go:build !clientgo_pre19

package shim

import (
	"errors"

	"listwatch.dev/listwatchtest"
)

// ListWatchUntil is gone from client-go v0.19 on (kubernetes PR #90855).
func runListWatchUntil(*listwatchtest.Env) error {
	return errors.New("mode list-watch-until: tools/watch's ListWatchUntil was removed in client-go v0.19 (kubernetes PR #90855); build a release from v0.15 to v0.18")
}
