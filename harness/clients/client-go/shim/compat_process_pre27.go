//go:build clientgo_pre27

package shim

import "k8s.io/client-go/tools/cache"

// client-go before v0.27: a controller's ProcessFunc takes the popped object only.
func processFunc(f func(obj interface{}) error) cache.ProcessFunc {
	return cache.ProcessFunc(f)
}
