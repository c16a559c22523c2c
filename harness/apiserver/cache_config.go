//go:build !apiserver_pre26

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// nameResource names the resource the cacher serves, for its errors and metrics (v0.26 on).
func nameResource(c *cacher.Config) { c.GroupResource = gr }
