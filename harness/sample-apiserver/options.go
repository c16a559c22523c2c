//go:build !sample_pre31

package main

import (
	"context"
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/options"
	"k8s.io/sample-apiserver/pkg/apiserver"
	"k8s.io/sample-apiserver/pkg/cmd/server"
)

// newOptions makes sample-apiserver's options with featureGates set. The command registers the wardle
// component, its BanFlunder gate and its version mapping onto the kube component in the component
// registry, and the --feature-gates flag; it is not run.
func newOptions(ctx context.Context, featureGates string) (*server.WardleServerOptions, error) {
	o := server.NewWardleServerOptions(os.Stderr, os.Stderr)
	cmd := server.NewCommandStartWardleServer(ctx, o, false)
	if featureGates != "" {
		if err := cmd.Flags().Set("feature-gates", featureGates); err != nil {
			return nil, err
		}
	}
	return o, setRegistry(o)
}

// startInformers starts the informers of BanFlunder's initializer once the server runs.
func startInformers(o *server.WardleServerOptions) genericapiserver.PostStartHookFunc {
	return func(hook genericapiserver.PostStartHookContext) error {
		o.SharedInformerFactory.Start(hook.Done())
		return nil
	}
}

// runPrepared serves until ctx ends or the server fails.
func runPrepared(ctx context.Context, s interface{ RunWithContext(context.Context) error }) error {
	return s.RunWithContext(ctx)
}

// noCoreAPI leaves the server without a core API client: the recommended options take none.
func noCoreAPI(ro *options.RecommendedOptions, _ string, _ int) error {
	ro.CoreAPI = nil
	return nil
}

// completeVersion has nothing to add: the server's /version is its effective version's.
func completeVersion(apiserver.CompletedConfig) {}
