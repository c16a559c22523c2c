// Command etcd runs one etcd member in process (go.etcd.io/etcd/server/v3/embed) with the flags the
// conformance run passes to etcd: --name, --data-dir, --listen-client-urls, --advertise-client-urls,
// --listen-peer-urls, --initial-advertise-peer-urls, --initial-cluster, --logger, --log-outputs.
// It prints "etcd Version: X" for --version, like etcd, and exits when its parent dies.
//
// The same source builds against every etcd 3.5, 3.6 and 3.7 release: go.mod pins v3.6.16, and
// releases/<version>/ holds the go.mod and go.sum of each other pinned release (scripts/install-etcd).
// embed.Config names its URL fields the same way in all of them (ListenClientUrls and its kin), so
// the one source needs no per-release file.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/server/v3/embed"
)

func urls(flagName, value string) []url.URL {
	u, err := url.Parse(value)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --%s: %v\n", flagName, err)
		os.Exit(2)
	}
	return []url.URL{*u}
}

func main() {
	showVersion := flag.Bool("version", false, "print the version and exit")
	name := flag.String("name", "default", "member name")
	dataDir := flag.String("data-dir", "", "data directory")
	listenClient := flag.String("listen-client-urls", "http://127.0.0.1:2379", "client URL to listen on")
	advertiseClient := flag.String("advertise-client-urls", "http://127.0.0.1:2379", "client URL to advertise")
	listenPeer := flag.String("listen-peer-urls", "http://127.0.0.1:2380", "peer URL to listen on")
	advertisePeer := flag.String("initial-advertise-peer-urls", "http://127.0.0.1:2380", "peer URL to advertise")
	cluster := flag.String("initial-cluster", "", "initial cluster")
	logger := flag.String("logger", "zap", "logger (zap only)")
	logOutputs := flag.String("log-outputs", "stderr", "log output")
	flag.Parse()
	if *showVersion {
		fmt.Printf("etcd Version: %s\n", version.Version)
		return
	}
	// Die with the parent (a conformance run killed by a signal leaves no etcd behind).
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = urls("listen-client-urls", *listenClient)
	cfg.AdvertiseClientUrls = urls("advertise-client-urls", *advertiseClient)
	cfg.ListenPeerUrls = urls("listen-peer-urls", *listenPeer)
	cfg.AdvertisePeerUrls = urls("initial-advertise-peer-urls", *advertisePeer)
	if *cluster == "" {
		*cluster = fmt.Sprintf("%s=%s", *name, *advertisePeer)
	}
	cfg.InitialCluster = *cluster
	cfg.Logger = *logger
	cfg.LogOutputs = []string{*logOutputs}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	}
	defer e.Close()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	case <-signals:
		return
	}
	select {
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	case <-signals:
	}
}
