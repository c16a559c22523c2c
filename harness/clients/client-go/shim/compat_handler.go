//go:build !clientgo_pre26

package shim

import (
	"time"

	"k8s.io/client-go/tools/cache"
)

// client-go v0.26 and later: AddEventHandler returns a registration and an error.
func addEventHandler(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	_, err := inf.AddEventHandler(h)
	return err
}

func addEventHandlerWithResyncPeriod(inf cache.SharedIndexInformer, h cache.ResourceEventHandler, period time.Duration) error {
	_, err := inf.AddEventHandlerWithResyncPeriod(h, period)
	return err
}
