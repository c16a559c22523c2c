//go:build !apiserver_pre25

package main

import "k8s.io/apiserver/pkg/storage"

// versioner reads and writes objects' resourceVersions: storage's from v0.25.
var versioner = storage.APIObjectVersioner{}
