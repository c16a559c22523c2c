//go:build apiserver_pre27

package main

import "k8s.io/apiserver/pkg/storage"

// sendInitialEvents does nothing: before v0.27 storage has no streaming lists, and a watch that asks
// for one is served as a plain watch, as a release with the WatchList gate off serves it at this
// layer. The run draws none for such a release (ApiServerRelease::watch_list).
func sendInitialEvents(*storage.ListOptions) {}
