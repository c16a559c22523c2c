package listwatchtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// managerStart is what a manager session starts with.
type managerStart struct {
	Clusters int    `json:"clusters"`
	Requests int    `json:"requests"`
	WaitMs   uint64 `json:"wait_ms"`
}

// waitJSON is a request's wait for a cluster's cache to sync, as a reply shows it.
type waitJSON struct {
	Cluster int `json:"cluster"`
	// BoundMs is how long the wait may last from when it began; nil: no bound.
	BoundMs *float64 `json:"bound_ms"`
}

// requestJSON is a request as a reply shows it: the lock it holds, the wait it is in, how it ended
// ("served", "failed"; "" while it runs).
type requestJSON struct {
	Held    string    `json:"held,omitempty"`
	Wait    *waitJSON `json:"wait,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
}

// managerReply is a manager session's reply: its requests, and the clusters whose first list
// waits for listwatch to answer it.
type managerReply struct {
	Requests []requestJSON `json:"requests"`
	Listing  []bool        `json:"listing"`
}

// requestKey carries a request's number in its context.
type requestKey struct{}

// managerRequest is one request's trace: what it holds, what it waits for, since when.
type managerRequest struct {
	cluster   int
	goroutine string
	held      *LockMode
	heldSince time.Time
	wait      *waitJSON
	waitSince time.Time
	outcome   string
}

// managerSession is one run of a Manager, inside one synctest bubble.
type managerSession struct {
	mu       sync.Mutex
	start    time.Time
	clusters []string
	synced   []chan struct{}
	listing  []bool
	requests []*managerRequest
	bad      error // a tracing call the session cannot place: reported as the client's error

	stop    chan struct{}
	cancel  context.CancelFunc
	running sync.WaitGroup
}

func (s *managerSession) begin(c managerStart, m Manager) error {
	if c.Clusters < 1 || c.Requests < 1 {
		return fmt.Errorf("a manager needs a cluster and a request (got %d and %d)", c.Clusters, c.Requests)
	}
	s.start = time.Now()
	s.stop = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for k := 0; k < c.Clusters; k++ {
		s.clusters = append(s.clusters, "cluster-"+strconv.Itoa(k))
		s.synced = append(s.synced, make(chan struct{}))
	}
	s.listing = make([]bool, c.Clusters)
	deadline := time.Duration(c.WaitMs) * time.Millisecond
	env := &ManagerEnv{
		Clusters: s.clusters, Requests: c.Requests, Deadline: deadline, Namespace: "default",
		Context: ctx, Stop: s.stop, s: s,
	}
	serve, err := m(env)
	if err != nil {
		return err
	}
	if serve == nil {
		return errors.New("the manager returned no request function")
	}
	for i := 0; i < c.Requests; i++ {
		r := &managerRequest{cluster: i % c.Clusters}
		s.requests = append(s.requests, r)
		rctx, rcancel := context.WithTimeout(context.WithValue(ctx, requestKey{}, i), deadline)
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			defer rcancel()
			s.mu.Lock()
			r.goroutine = goroutineID()
			s.mu.Unlock()
			err := serve(rctx, s.clusters[r.cluster])
			s.mu.Lock()
			defer s.mu.Unlock()
			r.outcome = "served"
			if err != nil {
				r.outcome = "failed"
			}
		}()
	}
	return nil
}

// goroutineID is the calling goroutine's number, as runtime.Stack's dump names it.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// request is the trace of ctx's request; a context that is no request's is the client's error.
func (s *managerSession) request(ctx context.Context, what string) *managerRequest {
	i, ok := ctx.Value(requestKey{}).(int)
	if !ok || i < 0 || i >= len(s.requests) {
		if s.bad == nil {
			s.bad = fmt.Errorf("%s was given a context that is no request's: pass the request's context, or one derived from it", what)
		}
		return nil
	}
	return s.requests[i]
}

func (s *managerSession) locked(ctx context.Context, mode *LockMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	what := "Unlocked"
	if mode != nil {
		what = "Locked"
	}
	if r := s.request(ctx, what); r != nil {
		r.held, r.heldSince = mode, time.Now()
	}
}

func (s *managerSession) waiting(ctx context.Context, cluster string, stop <-chan struct{}) {
	k := -1
	for i, name := range s.clusters {
		if name == cluster {
			k = i
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.request(ctx, "Waiting")
	if r == nil {
		return
	}
	if k < 0 {
		s.bad = fmt.Errorf("Waiting: no cluster %q", cluster)
		return
	}
	w := &waitJSON{Cluster: k}
	if at, ok := ctx.Deadline(); ok && stop != nil && stop == ctx.Done() {
		bound := ms(time.Until(at))
		w.BoundMs = &bound
	}
	r.wait, r.waitSince = w, time.Now()
}

func (s *managerSession) waited(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.request(ctx, "Waited"); r != nil {
		r.wait = nil
	}
}

// reply is the session's state once its bubble is still.
func (s *managerSession) reply() (managerReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad != nil {
		return managerReply{}, s.bad
	}
	out := managerReply{Listing: append([]bool{}, s.listing...)}
	for _, r := range s.requests {
		j := requestJSON{Wait: r.wait, Outcome: r.outcome}
		if r.held != nil {
			j.Held = r.held.String()
		}
		out.Requests = append(out.Requests, j)
	}
	return out, nil
}

// sync answers cluster k's first list, and every list after it.
func (s *managerSession) sync(k int) error {
	if k < 0 || k >= len(s.synced) {
		return fmt.Errorf("sync: no cluster %d", k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listing[k] {
		return fmt.Errorf("sync: no list of cluster %d waits", k)
	}
	s.listing[k] = false
	close(s.synced[k])
	return nil
}

// explain names, for a stall of the bubble on sync locks, which request waits on a lock where and
// what each request holding a lock is doing, since when (fake time from the start).
func (s *managerSession) explain(st stall) (string, any) {
	state, _ := s.reply()
	s.mu.Lock()
	defer s.mu.Unlock()
	byGoroutine := map[string]int{}
	for i, r := range s.requests {
		byGoroutine[r.goroutine] = i
	}
	var parts []string
	for i, id := range st.blockedIDs {
		who := "a goroutine"
		if r, ok := byGoroutine[id]; ok {
			who = fmt.Sprintf("request-%d", r)
		}
		parts = append(parts, who+" waits for a lock: "+st.blocked[i])
	}
	for i, r := range s.requests {
		if r.held == nil {
			continue
		}
		held := fmt.Sprintf("request-%d holds the %s lock since %v", i, r.held, r.heldSince.Sub(s.start))
		if where := ownFrame(st.frames[r.goroutine]); where != "" {
			held += fmt.Sprintf(" (goroutine %s, now in %s)", r.goroutine, where)
		}
		switch {
		case r.wait != nil && r.wait.BoundMs == nil:
			held += fmt.Sprintf(", waiting with no bound for %s since %v", s.clusters[r.wait.Cluster], r.waitSince.Sub(s.start))
		case r.wait != nil:
			held += fmt.Sprintf(", waiting for %s since %v", s.clusters[r.wait.Cluster], r.waitSince.Sub(s.start))
		}
		parts = append(parts, held)
	}
	return strings.Join(parts, "; "), state
}

func (s *managerSession) shutdown() {
	close(s.stop)
	s.cancel()
	s.running.Wait()
}

// config is cluster k's config: a transport of the session's own, in JSON.
func (s *managerSession) config(k int) *rest.Config {
	return &rest.Config{
		Host:      "http://" + s.clusters[k] + ".listwatch.invalid",
		Transport: &clusterTransport{s: s, k: k},
		QPS:       -1,
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/json",
			AcceptContentTypes: "application/json",
		},
	}
}

// clusterTransport is one cluster's API server as a manager session plays it: ConfigMaps in the
// namespace, none of them, at resource version 1. A list (or a streaming list, a WATCH with
// sendInitialEvents) waits until listwatch answers the cluster's first list; a watch then stays
// open and quiet until its request ends.
type clusterTransport struct {
	s *managerSession
	k int
}

const configMapsPath = "/api/v1/namespaces/default/configmaps"

func (t *clusterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Path != configMapsPath {
		return respond(req, http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`), nil
	}
	q := req.URL.Query()
	watching := q.Get("watch") == "true" || q.Get("watch") == "1"
	if !watching || q.Get("sendInitialEvents") == "true" {
		if err := t.awaitSync(req.Context()); err != nil {
			return nil, err
		}
	}
	if !watching {
		return respond(req, http.StatusOK, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`), nil
	}
	var first string
	if q.Get("sendInitialEvents") == "true" {
		first = `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	}
	resp := respond(req, http.StatusOK, "")
	resp.Body = &quietBody{first: first, done: req.Context().Done(), stop: t.s.stop}
	return resp, nil
}

// awaitSync waits for the cluster's first list to be answered.
func (t *clusterTransport) awaitSync(ctx context.Context) error {
	t.s.mu.Lock()
	ch := t.s.synced[t.k]
	select {
	case <-ch:
	default:
		t.s.listing[t.k] = true
	}
	t.s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.s.stop:
		return errors.New("the run stopped")
	}
}

func respond(req *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: req, ContentLength: -1,
	}
}

// quietBody is a watch's body: first, then nothing until its request ends or the run stops.
type quietBody struct {
	first string
	done  <-chan struct{}
	stop  <-chan struct{}
	mu    sync.Mutex
	shut  chan struct{}
}

func (b *quietBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.first != "" {
		n := copy(p, b.first)
		b.first = b.first[n:]
		b.mu.Unlock()
		return n, nil
	}
	if b.shut == nil {
		b.shut = make(chan struct{})
	}
	shut := b.shut
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-b.stop:
	case <-shut:
	}
	return 0, io.EOF
}

func (b *quietBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut == nil {
		b.shut = make(chan struct{})
	}
	select {
	case <-b.shut:
	default:
		close(b.shut)
	}
	return nil
}
