//go:build clientgo_pre19

package shim

import (
	"fmt"

	"listwatch.dev/listwatchtest"
)

// The pager's configurations pass a resourceVersionMatch, which ListOptions has from client-go v0.19.
func runPager(mode string) (listwatchtest.Client, error) {
	return nil, fmt.Errorf("mode %q: ListOptions has no ResourceVersionMatch before client-go v0.19; build a release from v0.19", mode)
}

// pagerModes: the pager's configurations run in this release.
const pagerModes = false
