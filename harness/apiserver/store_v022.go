//go:build apiserver_pre23

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// newStore builds v0.22's etcd3 store: as v0.23 to v0.28's, but it takes no resource name.
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	store := etcd3.New(c.Client, codec, newFunc, prefix, identity.NewEncryptCheckTransformer(), true,
		etcd3.NewDefaultLeaseManagerConfig())
	return store, compaction{}, nil
}
