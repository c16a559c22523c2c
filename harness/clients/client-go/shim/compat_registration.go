//go:build !clientgo_pre27

package shim

import "k8s.io/client-go/tools/cache"

const hasRegistrationSynced = true

// client-go v0.27 and later: a handler's registration says when that handler has been told of the
// whole first list (PR #113985).
func addHandlerSynced(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) (func() bool, error) {
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	return reg.HasSynced, nil
}
