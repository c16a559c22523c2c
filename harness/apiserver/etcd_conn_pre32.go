//go:build apiserver_pre32

package main

import clientv3 "go.etcd.io/etcd/client/v3"

// etcdConn is the etcd client the store takes: before v0.32 the plain client (embedded, so that the
// server reaches it as conn.Client as it does etcd's client for Kubernetes).
type etcdConn struct{ *clientv3.Client }

func dial(cfg clientv3.Config) (*etcdConn, error) {
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	return &etcdConn{c}, nil
}
