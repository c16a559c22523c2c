//go:build clientgo_pre26

package shim

import (
	"time"

	"k8s.io/client-go/tools/cache"
)

// client-go before v0.26: AddEventHandler returns nothing.
func addEventHandler(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	inf.AddEventHandler(h)
	return nil
}

func addEventHandlerWithResyncPeriod(inf cache.SharedIndexInformer, h cache.ResourceEventHandler, period time.Duration) error {
	inf.AddEventHandlerWithResyncPeriod(h, period)
	return nil
}
