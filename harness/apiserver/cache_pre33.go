//go:build apiserver_pre33

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// newStack puts the store under the cacher as releases before v0.33 do: the cacher takes every
// request itself and passes to the store what it does not serve.
func newStack(c *etcdConn, prefix string) (*stack, error) {
	store, _, err := newStore(c, prefix)
	if err != nil {
		return nil, err
	}
	ch, err := cacher.NewCacherFromConfig(cacherConfig(store))
	if err != nil {
		return nil, err
	}
	return &stack{store: ch, wait: cacheReady(ch), stop: ch.Stop}, nil
}
