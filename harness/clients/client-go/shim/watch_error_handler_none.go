//go:build clientgo_pre19

package shim

import (
	"errors"

	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// errNoWatchErrorHandler: client-go has watch error handlers from v0.19.
var errNoWatchErrorHandler = errors.New("client-go has no watch error handler before v0.19 (kubernetes PR #87329)")

// setWatchErrorHandler: a SharedIndexInformer has SetWatchErrorHandler from client-go v0.19.
func setWatchErrorHandler(*listwatchtest.Env, cache.SharedIndexInformer) error {
	return errNoWatchErrorHandler
}

// setControllerWatchErrorHandler: a controller's Config has WatchErrorHandler from client-go v0.19.
func setControllerWatchErrorHandler(*listwatchtest.Env, *cache.Config) error {
	return errNoWatchErrorHandler
}
