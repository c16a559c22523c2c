//go:build apiserver_pre25

package main

import "k8s.io/apiserver/pkg/storage/etcd3"

// versioner reads and writes objects' resourceVersions: the etcd3 package's before v0.25.
var versioner = etcd3.APIObjectVersioner{}
