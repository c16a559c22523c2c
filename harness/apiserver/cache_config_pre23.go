//go:build apiserver_pre23

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// releaseConfig sets the cacher's clock: v0.22's is apimachinery's, and it takes no resource name.
func releaseConfig(c *cacher.Config) { c.Clock = movedRealClock{m: cacherClock} }
