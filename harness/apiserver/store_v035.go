//go:build !apiserver_pre35

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/utils/clock"
)

// newStore builds v0.35's etcd3 store: it takes the compactor and returns an error.
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	compactor := etcd3.NewCompactor(c.Client, 0, clock.RealClock{}, nil)
	store, err := etcd3.New(c, compactor, codec, newFunc, newListFunc, prefix, resourcePrefix, gr,
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig(),
		etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		compactor.Stop()
		return nil, compaction{}, err
	}
	return store, compaction{compacted: compactor.UpdateCompactRevision, stop: compactor.Stop}, nil
}
