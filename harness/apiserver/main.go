// Command apiserver runs the Kubernetes API server's storage stack for one resource, as the API server
// does (k8s.io/apiserver's etcd3 store under its cacher, wrapped by the cache delegator as the registry's
// StorageWithCacher does), against a real etcd, and serves it to listwatch's conformance run over JSON
// lines: one request a line on stdin, answers and watch messages a line on stdout.
//
// Each sequence of the run calls "start", which stops the previous cacher and builds a fresh etcd3 store
// and cacher under a new etcd prefix; revisions are etcd's own, the Rust side subtracts the base the
// start answers. The process exits when stdin closes and, through PR_SET_PDEATHSIG, when its parent dies.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// request is one line of stdin.
type request struct {
	ID      int64  `json:"id"`
	Op      string `json:"op"`
	Key     int    `json:"key"`
	Keys    []int  `json:"keys"`
	Rev     int64  `json:"rev"`
	Watch   int    `json:"watch"`
	RV      string `json:"rv"`
	Match   string `json:"match"`
	Limit   int64  `json:"limit"`
	Cont    string `json:"continue"`
	Marks   bool   `json:"bookmarks"`
	Initial bool   `json:"send_initial_events"`
	// Timeout is a watch's timeoutSeconds (0: none).
	Timeout int64 `json:"timeout_seconds"`
	// Named: a LIST with the field selector metadata.name=<the name of Key>, in the namespace
	// (Namespaced) or across namespaces.
	Named      bool `json:"named"`
	Namespaced bool `json:"namespaced"`
}

// object is a Pod as the Rust side compares it.
type object struct {
	Key     int    `json:"key"`
	UID     string `json:"uid"`
	RV      int64  `json:"rv"`
	Version int    `json:"version"`
}

// answer is one line of stdout: the answer to request ID, or (ID 0) a message on watch Watch.
type answer struct {
	ID       int64    `json:"id,omitempty"`
	Watch    *int     `json:"watch,omitempty"`
	Error    *apiErr  `json:"error,omitempty"`
	Rev      int64    `json:"rev,omitempty"`
	Keys     []int    `json:"keys,omitempty"`
	Items    []object `json:"items,omitempty"`
	Cont     string   `json:"continue,omitempty"`
	Refused  string   `json:"refused,omitempty"`
	Event    string   `json:"event,omitempty"`
	Object   *object  `json:"object,omitempty"`
	Initial  bool     `json:"initial_events_end,omitempty"`
	Closed   bool     `json:"closed,omitempty"`
	Version  string   `json:"version,omitempty"`
	CacheRev int64    `json:"cache_rev,omitempty"`
}

type apiErr struct {
	Code    int32  `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

var out = make(chan answer, 1024)

func send(a answer) { out <- a }

func main() {
	endpoint := flag.String("endpoint", "", "etcd client URL (loopback)")
	gates := flag.String("feature-gates", "", "k8s.io/apiserver feature gates, as the API server's flag (A=true,B=false)")
	flag.Parse()
	if *gates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
			fmt.Fprintf(os.Stderr, "apiserver: --feature-gates: %v\n", err)
			os.Exit(2)
		}
	}
	// Die with the parent, and exit when stdin closes: no server outlives its run.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "apiserver: --endpoint is required")
		os.Exit(2)
	}
	done := make(chan struct{})
	go func() {
		w := bufio.NewWriter(os.Stdout)
		enc := json.NewEncoder(w)
		for a := range out {
			_ = enc.Encode(a)
			if len(out) == 0 {
				_ = w.Flush()
			}
		}
		_ = w.Flush()
		close(done)
	}()
	srv, err := newServer(*endpoint)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apiserver: %v\n", err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "apiserver: bad request line: %v\n", err)
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		a := srv.handle(ctx, &req)
		cancel()
		a.ID = req.ID
		send(a)
	}
	srv.stop()
	close(out)
	<-done
}
