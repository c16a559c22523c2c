//go:build !sample_pre33

package main

import "k8s.io/sample-apiserver/pkg/cmd/server"

// setRegistry applies the component registry's flags: the options' own registry.
func setRegistry(o *server.WardleServerOptions) error {
	return o.ComponentGlobalsRegistry.Set()
}
