//go:build !clientgo_pre24

package shim

import "k8s.io/client-go/tools/cache"

// hasSetTransform: client-go v0.24 and later: a SharedInformer takes a transform (SetTransform).
const hasSetTransform = true

// setTransform gives the informer its transform, where the release can.
func setTransform(inf cache.SharedIndexInformer, f func(any) (any, error)) error {
	return inf.SetTransform(f)
}
