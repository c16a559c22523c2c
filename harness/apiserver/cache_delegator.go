//go:build !apiserver_pre33

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// newStack puts the store under the cacher as v0.33 on does: the cache delegator takes every request
// and passes to the store what the cache does not serve.
func newStack(c *etcdConn, prefix string) (*stack, error) {
	store, compactor, err := newStore(c, prefix)
	if err != nil {
		return nil, err
	}
	cfg := cacherConfig(store)
	cfg.EventsHistoryWindow = cacher.DefaultEventFreshDuration
	ch, err := cacher.NewCacherFromConfig(cfg)
	if err != nil {
		compactor.close()
		return nil, err
	}
	d := cacher.NewCacheDelegator(ch, store)
	return &stack{store: d, wait: ch.Wait, compacted: compactor.compacted,
		stop: func() { d.Stop(); compactor.close() }}, nil
}
