//go:build apiserver_pre34 && !apiserver_pre32

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// newStore builds the etcd3 store of v0.32 and v0.33: over etcd's client for Kubernetes, with no
// compactor (it learns of compactions from etcd's answers).
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	store := etcd3.New(c, codec, newFunc, newListFunc, prefix, resourcePrefix, gr,
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig(),
		etcd3.NewDefaultDecoder(codec, versioner), versioner)
	return store, compaction{}, nil
}
