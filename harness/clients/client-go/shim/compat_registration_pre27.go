//go:build clientgo_pre27

package shim

import (
	"errors"

	"k8s.io/client-go/tools/cache"
)

const hasRegistrationSynced = false

// Before client-go v0.27 a handler's registration has no HasSynced.
func addHandlerSynced(cache.SharedIndexInformer, cache.ResourceEventHandler) (func() bool, error) {
	return nil, errors.New("a handler registration's HasSynced needs client-go v0.27 or later")
}
