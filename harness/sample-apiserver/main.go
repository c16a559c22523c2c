// Command sample-apiserver serves k8s.io/sample-apiserver's wardle.example.com API (flunders,
// namespaced; fischers, cluster-scoped) over HTTPS on 127.0.0.1, storing in the etcd that --etcd names:
// the generic API server's real handlers, validation, admission and watch cache (cacher), for the
// HTTP conformance runs.
//
//	sample-apiserver --etcd http://127.0.0.1:2379 --dir DIR [--etcd-prefix /prefix] [--feature-gates ...]
//
// It builds the server the way sample-apiserver's own command does (WardleServerOptions, Config,
// Complete().New()), changing only the options that would need a kube-apiserver, which is not there:
//   - no delegated authentication: a bearer token of its own, written into DIR/kubeconfig;
//   - no delegated authorization: AlwaysAllow (what a nil Authorization option gives);
//   - no compactor (a run compacts etcd itself, and the compactor's writes would move the revision);
//   - no core API (CoreAPI nil), so no API Priority and Fairness (the max-in-flight limits instead)
//     and none of the admission plugins that read the core API (NamespaceLifecycle, the admission
//     webhooks and policies); sample-apiserver's own BanFlunder plugin stays, fed by its informer on
//     fischers over the loopback client.
//
// It serves on a free port with a self-signed certificate it writes into DIR (apiserver.crt,
// apiserver.key). Once /readyz answers ok it writes DIR/kubeconfig (the server URL, the certificate
// authority, the token) and prints one JSON line on stdout,
//
//	{"url":"https://127.0.0.1:PORT","kubeconfig":"DIR/kubeconfig"}
//
// and logs to stderr only. It exits when its stdin reaches EOF, and Linux kills it when its parent
// dies. It exits 1 with one line on stderr if etcd does not answer within 20 s, the server is not
// ready within a minute or it cannot start (a bad --feature-gates too); 2 without --etcd or --dir.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
	"k8s.io/sample-apiserver/pkg/admission/wardleinitializer"
)

const (
	etcdTimeout  = 20 * time.Second
	readyTimeout = time.Minute
	// tokenUser is who a request with the kubeconfig's token is: a member of system:masters, though
	// the AlwaysAllow authorizer asks nothing of it.
	tokenUser = "listwatch"
)

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sample-apiserver: "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	etcd := flag.String("etcd", "", "URL of the etcd to store in, e.g. http://127.0.0.1:2379 (required)")
	dir := flag.String("dir", "", "directory for the serving certificate and the kubeconfig (required)")
	prefix := flag.String("etcd-prefix", "", "etcd key prefix of the stored objects (default /listwatch/sample-apiserver/<random>, new each start)")
	mistake := flag.String("mistake", "", "answer as a server with this mistake would ("+mistakeNames()+"): a server of the tests' own")
	featureGates := flag.String("feature-gates", "", "feature gates, as the Kubernetes servers take them: [component:]Gate=bool,... (component kube or wardle; kube if none)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: sample-apiserver --etcd URL --dir DIR [--etcd-prefix PREFIX] [--feature-gates GATES]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *etcd == "" || *dir == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *prefix == "" {
		*prefix = "/listwatch/sample-apiserver/" + randomHex(8)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(2, "--dir: %v", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		fail(2, "--dir: %v", err)
	}
	*dir = abs

	// The parent closes stdin to stop the server.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()

	if err := checkEtcd(*etcd); err != nil {
		fail(1, "etcd at %s did not answer within %s: %v", *etcd, etcdTimeout, err)
	}
	klog.Infof("sample-apiserver: storing under %s in etcd at %s", *prefix, *etcd)

	wrap, ok := mistakes[*mistake]
	if *mistake != "" && !ok {
		fail(2, "--mistake %q is not one of %s", *mistake, mistakeNames())
	}
	if err := run(*etcd, *prefix, *dir, *featureGates, wrap); err != nil {
		fail(1, "%v", err)
	}
}

// checkEtcd asks the etcd for its version over HTTP until it answers, so that a server with no etcd
// fails at once instead of retrying behind a /readyz that never answers ok.
func checkEtcd(endpoint string) error {
	deadline := time.Now().Add(etcdTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(strings.TrimSuffix(endpoint, "/") + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /version: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func run(etcd, prefix, dir, featureGates string, mistake func(http.Handler) http.Handler) error {
	ctx := context.Background()
	o, err := newOptions(ctx, featureGates)
	if err != nil {
		return fmt.Errorf("--feature-gates: %v", err)
	}

	ro := o.RecommendedOptions
	ro.Etcd.StorageConfig.Transport.ServerList = []string{etcd}
	ro.Etcd.StorageConfig.Prefix = prefix
	// No compactor of its own: every 5 minutes it would write its compaction key and move etcd's
	// revision under a running sequence. The runs compact etcd themselves.
	ro.Etcd.StorageConfig.CompactionInterval = 0

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1: %v", err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	ro.SecureServing.Listener = listener
	ro.SecureServing.BindAddress = net.IPv4(127, 0, 0, 1)
	ro.SecureServing.BindPort = port
	ro.SecureServing.ServerCert.CertDirectory = dir // apiserver.crt and apiserver.key, generated

	// No kube-apiserver to delegate to or to read the core API from.
	ro.Authentication = nil // the token below instead
	ro.Authorization = nil  // AlwaysAllow
	if err := noCoreAPI(ro, dir, port); err != nil {
		return err
	}
	if err := noFlowControl(ro); err != nil { // its flow schemas live in the core API
		return err
	}

	// Complete registers BanFlunder (while its gate is on) and appends it to the plugin order. The
	// generic admission options insist on a core API client and informers, so they are taken out and
	// the plugins that need no core API are chained below, with the initializer sample-apiserver's
	// Config sets up.
	if err := o.Complete(); err != nil {
		return err
	}
	admissionOptions := ro.Admission
	ro.Admission = nil
	if err := o.Validate(nil); err != nil {
		return err
	}

	config, err := o.Config()
	if err != nil {
		return err
	}

	token := randomHex(32)
	config.GenericConfig.Authentication.Authenticator = authenticatorfactory.NewFromTokens(map[string]*user.DefaultInfo{
		token: {Name: tokenUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}},
	}, config.GenericConfig.Authentication.APIAudiences)

	var plugins []string
	for _, name := range admissionOptions.RecommendedPluginOrder {
		if name == "BanFlunder" {
			plugins = append(plugins, name)
		}
	}
	klog.Infof("sample-apiserver: admission plugins %v", plugins)
	if len(plugins) > 0 {
		chain, err := admissionOptions.Plugins.NewFromPlugins(plugins, noPluginConfig{},
			wardleinitializer.New(o.SharedInformerFactory), admissionOptions.Decorators)
		if err != nil {
			return fmt.Errorf("admission: %v", err)
		}
		config.GenericConfig.AdmissionControl = chain
	}

	if mistake != nil {
		config.GenericConfig.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
			return mistake(genericapiserver.DefaultBuildHandlerChain(h, c))
		}
	}
	completed := config.Complete()
	completeVersion(completed)
	wardle, err := completed.New()
	if err != nil {
		return err
	}
	wardle.GenericAPIServer.AddPostStartHookOrDie("start-sample-server-informers", startInformers(o))
	prepared := wardle.GenericAPIServer.PrepareRun()

	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	ca, err := certificateAuthority(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		return err
	}
	stopped := make(chan error, 1)
	go func() { stopped <- runPrepared(ctx, prepared) }()
	if err := waitReady(url, ca, token, stopped); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, url, ca, token); err != nil {
		return err
	}
	line, _ := json.Marshal(struct {
		URL        string `json:"url"`
		Kubeconfig string `json:"kubeconfig"`
	}{url, kubeconfig})
	if _, err := fmt.Fprintf(os.Stdout, "%s\n", line); err != nil {
		return err
	}
	klog.Infof("sample-apiserver: serving at %s, kubeconfig %s", url, kubeconfig)
	err = <-stopped
	if err == nil {
		err = errors.New("the server stopped")
	}
	return err
}

// noPluginConfig gives every admission plugin no configuration file, like an empty
// --admission-control-config-file.
type noPluginConfig struct{}

func (noPluginConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

var _ admission.ConfigProvider = noPluginConfig{}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		fail(1, "random: %v", err)
	}
	return hex.EncodeToString(b)
}
