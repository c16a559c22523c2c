//go:build clientgo_pre24

package shim

import (
	"errors"

	"k8s.io/client-go/tools/cache"
)

// hasSetTransform: client-go before v0.24: a SharedInformer has no SetTransform.
const hasSetTransform = false

// setTransform gives the informer its transform, where the release can.
func setTransform(cache.SharedIndexInformer, func(any) (any, error)) error {
	return errors.New("SetTransform needs client-go v0.24 or later")
}
