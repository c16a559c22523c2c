//go:build clientgo_pre19

package shim

import (
	"errors"

	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// setWatchErrorHandler: a SharedIndexInformer has SetWatchErrorHandler from client-go v0.19.
func setWatchErrorHandler(*listwatchtest.Env, cache.SharedIndexInformer) error {
	return errors.New("SharedInformer has no SetWatchErrorHandler before client-go v0.19 (kubernetes PR #87329)")
}
