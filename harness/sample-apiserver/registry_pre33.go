//go:build sample_pre33 && !sample_pre31

package main

import (
	"k8s.io/component-base/featuregate"
	"k8s.io/sample-apiserver/pkg/cmd/server"
)

// setRegistry applies the component registry's flags. Until v0.33 the registry is featuregate's
// default one, not a field of the options (v0.32.3).
func setRegistry(*server.WardleServerOptions) error {
	return featuregate.DefaultComponentGlobalsRegistry.Set()
}
