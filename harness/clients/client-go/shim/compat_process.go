//go:build !clientgo_pre27

package shim

import "k8s.io/client-go/tools/cache"

// client-go v0.27 and later: a controller's ProcessFunc is also told whether the object is part of
// the initial list.
func processFunc(f func(obj interface{}) error) cache.ProcessFunc {
	return func(obj interface{}, _ bool) error { return f(obj) }
}
