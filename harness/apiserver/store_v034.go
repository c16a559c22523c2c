//go:build apiserver_pre35 && !apiserver_pre34

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/utils/clock"
)

// newStore builds v0.34's etcd3 store: it takes the compactor and cannot fail.
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	compactor := etcd3.NewCompactor(c.Client, 0, clock.RealClock{}, nil)
	store := etcd3.New(c, compactor, codec, newFunc, newListFunc, prefix, resourcePrefix, gr,
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig(),
		etcd3.NewDefaultDecoder(codec, versioner), versioner)
	return store, compaction{compacted: compactor.UpdateCompactRevision, stop: compactor.Stop}, nil
}
