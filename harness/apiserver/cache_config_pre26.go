//go:build apiserver_pre26 && !apiserver_pre23

package main

import "k8s.io/apiserver/pkg/storage/cacher"

// releaseConfig sets the cacher's clock: v0.23 to v0.25's config takes no resource name.
func releaseConfig(c *cacher.Config) { c.Clock = movedRealClock{m: cacherClock} }
