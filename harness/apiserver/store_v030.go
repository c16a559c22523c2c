//go:build apiserver_pre32 && !apiserver_pre29

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// newStore builds the etcd3 store of v0.30 and v0.31: over the plain etcd client, with no decoder,
// versioner or compactor.
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	store := etcd3.New(c.Client, codec, newFunc, newListFunc, prefix, resourcePrefix, gr,
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig())
	return store, compaction{}, nil
}
