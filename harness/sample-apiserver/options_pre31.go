//go:build sample_pre31

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/options"
	"k8s.io/component-base/version"
	"k8s.io/sample-apiserver/pkg/apiserver"
	"k8s.io/sample-apiserver/pkg/cmd/server"
)

// newOptions makes sample-apiserver's options with featureGates set. Until v0.31 there is no
// component registry: the command adds --feature-gates for the process's one mutable gate, and the
// server reads that gate; the command takes a stop channel, not a context.
func newOptions(ctx context.Context, featureGates string) (*server.WardleServerOptions, error) {
	o := server.NewWardleServerOptions(os.Stderr, os.Stderr)
	cmd := server.NewCommandStartWardleServer(o, ctx.Done())
	if featureGates != "" {
		if err := cmd.Flags().Set("feature-gates", featureGates); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// startInformers starts the informers of BanFlunder's initializer once the server runs; until v0.31
// the hook's context is a stop channel.
func startInformers(o *server.WardleServerOptions) genericapiserver.PostStartHookFunc {
	return func(hook genericapiserver.PostStartHookContext) error {
		o.SharedInformerFactory.Start(hook.StopCh)
		return nil
	}
}

// runPrepared serves until ctx ends or the server fails; until v0.31 the server runs on a stop channel.
func runPrepared(ctx context.Context, s interface{ Run(<-chan struct{}) error }) error {
	return s.Run(ctx.Done())
}

// noCoreAPI gives the server a core API client that nothing reads through. Until v0.31 the
// recommended options build a clientset from the core API's client config whatever they are given:
// at v0.30.6 RecommendedOptions.ApplyTo calls kubernetes.NewForConfig(config.ClientConfig), which a
// nil config (no CoreAPI options) crashes. The client points at the server itself; with API Priority
// and Fairness off and the admission plugins that read the core API taken out, no request goes
// through it.
func noCoreAPI(ro *options.RecommendedOptions, dir string, port int) error {
	path := filepath.Join(dir, "core-api-unused.kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: self, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
contexts: [{name: self, context: {cluster: self, user: none}}]
users: [{name: none, user: {}}]
current-context: self
`, port)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err
	}
	ro.CoreAPI.CoreAPIKubeconfigPath = path
	return nil
}

// completeVersion sets the gitVersion /version answers. Until v0.31 sample-apiserver's
// Config.Complete sets its version to Major "1", Minor "0" and nothing else (v0.27.16, v0.30.6), and a
// /version with no gitVersion is not a Kubernetes API server's to the REST driver (as to kubectl
// version). It is the build's component-base version, which the later releases report.
func completeVersion(completed apiserver.CompletedConfig) {
	v := version.Get()
	completed.GenericConfig.Version = &v
}
