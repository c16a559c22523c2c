//go:build apiserver_pre26

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// nameResource does nothing: v0.25's cacher takes no resource name.
func nameResource(*cacher.Config) {}
