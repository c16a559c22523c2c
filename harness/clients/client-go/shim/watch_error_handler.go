//go:build !clientgo_pre19

package shim

import (
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// setWatchErrorHandler gives the informer a watch error handler that tells listwatch of every error
// its reflector hands it (env.Told), before the informer starts, as SetWatchErrorHandler requires:
// after Run it refuses with an error. client-go v0.19 on (kubernetes PR #87329).
func setWatchErrorHandler(env *listwatchtest.Env, informer cache.SharedIndexInformer) error {
	return informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { env.Told(err) })
}

// setControllerWatchErrorHandler gives a controller's config the same handler (Config.WatchErrorHandler,
// v0.19 on), which cache.New's controller sets on the reflector it makes.
func setControllerWatchErrorHandler(env *listwatchtest.Env, c *cache.Config) error {
	c.WatchErrorHandler = func(_ *cache.Reflector, err error) { env.Told(err) }
	return nil
}
