//go:build apiserver_pre33 && !apiserver_pre31

package main

import (
	"context"

	"k8s.io/apiserver/pkg/storage/cacher"
)

// cacheReady is the cacher's own wait (v0.31 on).
func cacheReady(ch *cacher.Cacher) func(context.Context) error { return ch.Wait }
