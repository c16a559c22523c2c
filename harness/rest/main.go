// Command rest runs listwatch's API server conformance sequences through the Kubernetes REST API of
// any server: create, update and delete through its handlers, LIST with resourceVersion,
// resourceVersionMatch, limit and continue, WATCH with resourceVersion, allowWatchBookmarks and
// sendInitialEvents, all through client-go's REST client as a controller would send them. It speaks
// the same JSON lines on stdin and stdout as harness/apiserver, so `listwatch conformance http`
// compares its answers with the model's as `conformance apiserver` compares the in-process cache's.
//
// The server is reached as kubectl reaches it: a kubeconfig (--kubeconfig, --context) or a URL
// (--server) with a bearer token file and TLS options. With --etcd (the server's own etcd, reachable
// when listwatch started it) it also compacts etcd and deletes several objects in one etcd
// transaction, as a lease revoke does; without, sequences hold neither.
//
// The process exits when stdin closes and, through PR_SET_PDEATHSIG, when its parent dies.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
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

// object is what the Rust side compares of an object.
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
	Server   string   `json:"server,omitempty"`
	CacheRev int64    `json:"cache_rev,omitempty"`
}

type apiErr struct {
	Code    int32  `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

var out = make(chan answer, 1024)

func send(a answer) { out <- a }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rest: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	var f flags
	f.bind(flag.CommandLine)
	flag.Parse()
	// Die with the parent, and exit when stdin closes: no driver outlives its run. Ctrl-C reaches the
	// whole process group; the driver leaves it to listwatch, which closes stdin once it has stopped,
	// so that the driver still deletes what the run wrote on the server.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	d, err := newDriver(&f)
	if err != nil {
		fail("%v", err)
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
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fail("bad request line: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		a := d.handle(ctx, &req)
		cancel()
		a.ID = req.ID
		send(a)
	}
	d.stop()
	close(out)
	<-done
}
