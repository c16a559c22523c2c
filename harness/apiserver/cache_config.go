//go:build !apiserver_pre26

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// releaseConfig sets what the cacher's config holds from v0.26: its clock, and the resource's name
// for its errors and metrics.
func releaseConfig(c *cacher.Config) {
	c.Clock = movedRealClock{m: cacherClock}
	c.GroupResource = gr
}
