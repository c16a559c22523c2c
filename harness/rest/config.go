package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// flags are the driver's command line: where the server is and how to reach it (kubectl's flags of
// the same names), what to write, and the server's etcd when the run may reach it.
type flags struct {
	kubeconfig, context, server, tokenFile, ca string
	insecure                                   bool
	resource, other, namespace                 string
	etcd, etcdPrefix                           string
}

func (f *flags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig to read (default: KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "the kubeconfig context to use")
	fs.StringVar(&f.server, "server", "", "the server's URL (with no kubeconfig: the only thing read)")
	fs.StringVar(&f.tokenFile, "token-file", "", "a file holding a bearer token")
	fs.StringVar(&f.ca, "certificate-authority", "", "a PEM file of the CA that signed the server's certificate")
	fs.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not check the server's certificate")
	fs.StringVar(&f.resource, "resource", "v1/configmaps", "GROUP/VERSION/RESOURCE (core: VERSION/RESOURCE) of the namespaced resource to write, list and watch")
	fs.StringVar(&f.other, "other-resource", "", "another resource (namespaced or not), written to move the revision without an event of --resource")
	fs.StringVar(&f.namespace, "namespace", "", "the namespace to use, which must exist (default: one of the run's own, created where the server serves namespaces and deleted at the end)")
	fs.StringVar(&f.etcd, "etcd", "", "the server's etcd client URL: compactions and multi-key transactions go to it")
	fs.StringVar(&f.etcdPrefix, "etcd-prefix", "", "where --resource's objects live in that etcd (e.g. /registry/GROUP/RESOURCE)")
}

// restConfig is the client configuration kubectl would build from the same flags.
func (f *flags) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	if f.kubeconfig == "" && f.server != "" {
		cfg = &rest.Config{Host: f.server, BearerTokenFile: f.tokenFile,
			TLSClientConfig: rest.TLSClientConfig{CAFile: f.ca, Insecure: f.insecure}}
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = f.kubeconfig
		overrides := &clientcmd.ConfigOverrides{CurrentContext: f.context}
		overrides.ClusterInfo.Server = f.server
		overrides.ClusterInfo.CertificateAuthority = f.ca
		overrides.ClusterInfo.InsecureSkipTLSVerify = f.insecure
		overrides.AuthInfo.TokenFile = f.tokenFile
		loaded, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
		}
		cfg = loaded
	}
	// A sequence's requests come one after another; client-go's default rate limit (5 a second)
	// would only slow them down.
	cfg.QPS, cfg.Burst = -1, 0
	cfg.UserAgent = "listwatch-conformance"
	return cfg, nil
}

// parseResource reads GROUP/VERSION/RESOURCE, or VERSION/RESOURCE for the core group.
func parseResource(flagName, s string) (schema.GroupVersionResource, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, nil
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
	}
	return schema.GroupVersionResource{}, errors.New(flagName + " '" + s + "' is not GROUP/VERSION/RESOURCE (or VERSION/RESOURCE)")
}
