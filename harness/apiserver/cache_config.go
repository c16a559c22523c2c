//go:build !apiserver_pre26

package main

import (
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/utils/clock"
)

// releaseConfig sets what the cacher's config holds from v0.26: its clock, and the resource's name
// for its errors and metrics.
func releaseConfig(c *cacher.Config) {
	c.Clock = clock.RealClock{}
	c.GroupResource = gr
}
