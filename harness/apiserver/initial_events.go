//go:build !apiserver_pre27

package main

import "k8s.io/apiserver/pkg/storage"

// sendInitialEvents asks for a streaming list (A12): from v0.27, where storage's ListOptions has it.
func sendInitialEvents(opts *storage.ListOptions) {
	t := true
	opts.SendInitialEvents = &t
}
