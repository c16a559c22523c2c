//go:build !apiserver_pre32

package main

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
)

// etcdConn is the etcd client the store takes: from v0.32 etcd's client for Kubernetes, which embeds
// the plain client.
type etcdConn = kubernetes.Client

func dial(cfg clientv3.Config) (*etcdConn, error) { return kubernetes.New(cfg) }
