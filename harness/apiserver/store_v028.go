//go:build apiserver_pre29 && !apiserver_pre23

package main

import (
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// newStore builds the etcd3 store of v0.23 to v0.28: over the plain etcd client, with one prefix (the
// resource's own comes with each key), no list constructor, and paging a switch of its own, on as the
// API server sets it (storagebackend's Paging, the APIListChunking gate's default).
func newStore(c *etcdConn, prefix string) (storage.Interface, compaction, error) {
	store := etcd3.New(c.Client, codec, newFunc, prefix, gr, identity.NewEncryptCheckTransformer(), true,
		etcd3.NewDefaultLeaseManagerConfig())
	return store, compaction{}, nil
}
