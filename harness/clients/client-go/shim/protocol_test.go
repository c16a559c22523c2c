package shim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"os"
	"os/exec"
	"strings"
	"testing"
)

// proc is the test binary itself, serving the protocol in a child process, as the Rust side runs it.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	lines []string // every reply so far
}

func spawn(t *testing.T, watchList bool, extraEnv ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestShim$")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=randautoseed=0,randseednop=0",
		fmt.Sprintf("KUBE_FEATURE_WatchListClient=%v", watchList))
	cmd.Env = append(cmd.Env, extraEnv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the shim's stderr:\n%s", stderr.String())
		}
	})
	return p
}

// raw sends one command line and returns the reply line.
func (p *proc) raw(line string) string {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %s: %v", line, err)
	}
	reply, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("no reply to %s: %v", line, err)
	}
	p.lines = append(p.lines, reply)
	return reply
}

type effectT struct {
	Send *struct {
		Method, Path, Query string
	} `json:"send"`
	Cancel *struct{} `json:"cancel"`
	Notify *struct {
		Handler int             `json:"handler"`
		Kind    string          `json:"kind"`
		Object  json.RawMessage `json:"object"`
		Old     json.RawMessage `json:"old"`
	} `json:"notify"`
	Told *struct {
		Error string `json:"error"`
	} `json:"told"`
}

type replyT struct {
	Effects []effectT         `json:"effects"`
	RV      string            `json:"rv"`
	Synced  bool              `json:"synced"`
	Ready   []bool            `json:"ready"`
	Cache   []json.RawMessage `json:"cache"`
	Timer   *struct {
		Kind    string  `json:"kind"`
		AfterMs float64 `json:"after_ms"`
	} `json:"timer"`
	Unread    int     `json:"unread"`
	EndUnread bool    `json:"end_unread"`
	Read      []int   `json:"read"`
	Halted    *string `json:"halted"`
	Queued    int     `json:"queued"`
	Error     string  `json:"error"`
	Stuck     string  `json:"stuck"`
	Stopped   bool    `json:"stopped"`
}

func (p *proc) do(cmd any) replyT {
	p.t.Helper()
	b, _ := json.Marshal(cmd)
	line := p.raw(string(b))
	var r replyT
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.t.Fatalf("reply %q: %v", line, err)
	}
	if r.Error != "" || r.Stuck != "" {
		p.t.Fatalf("%s: %s", b, line)
	}
	if r.Halted != nil {
		p.t.Fatalf("%s: halted: %s", b, *r.Halted)
	}
	return r
}

type m = map[string]any

func start(seed uint64, waiters int) m {
	return m{"cmd": "start", "seed": seed, "waiters": waiters, "page_size": 0, "timeout_ms": 0}
}

// The wire as the Rust side writes it (harness/kube/src/wire): ConfigMaps in default, uid from the
// creating revision, data.version.
func cm(name string, uid, rv int, version int) string {
	return fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"%s","namespace":"default","uid":"8a1b3c4d-0000-4000-8000-%012x","resourceVersion":"%d"},"data":{"version":"%d"}}`,
		name, uid, rv, version)
}

func list(rv int, cont string, items ...string) m {
	meta := fmt.Sprintf(`{"resourceVersion":"%d"}`, rv)
	if cont != "" {
		meta = fmt.Sprintf(`{"resourceVersion":"%d","continue":"%s"}`, rv, cont)
	}
	body := fmt.Sprintf(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":%s,"items":[%s]}`, meta, strings.Join(items, ","))
	return m{"cmd": "respond", "status": 200, "body": body, "retry_after": nil}
}

func event(kind, object string) m {
	return m{"cmd": "line", "data": fmt.Sprintf(`{"type":"%s","object":%s}`+"\n", kind, object)}
}

func bookmark(rv int, initialEnd bool) m {
	meta := fmt.Sprintf(`{"resourceVersion":"%d"}`, rv)
	if initialEnd {
		meta = fmt.Sprintf(`{"resourceVersion":"%d","annotations":{"k8s.io/initial-events-end":"true"}}`, rv)
	}
	return event("BOOKMARK", fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":%s}`, meta))
}

func status(code int, reason, message string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s","reason":"%s","code":%d}`,
		message, reason, code)
}

func cmdOnly(c string) m { return m{"cmd": c} }

func fire(r replyT) m {
	ms := 0.0
	if r.Timer != nil {
		ms = r.Timer.AfterMs
	}
	return m{"cmd": "fire", "ms": ms}
}

// sends lists the queries of the requests among the effects.
func sends(r replyT) []string {
	var q []string
	for _, e := range r.Effects {
		if e.Send != nil {
			q = append(q, e.Send.Query)
		}
	}
	return q
}

// kinds lists the effects as short words: send, cancel, add, update, delete, delete-unknown, told.
func kinds(r replyT) []string {
	var k []string
	for _, e := range r.Effects {
		switch {
		case e.Send != nil:
			k = append(k, "send")
		case e.Cancel != nil:
			k = append(k, "cancel")
		case e.Notify != nil:
			k = append(k, e.Notify.Kind)
		case e.Told != nil:
			k = append(k, "told")
		}
	}
	return k
}

func has(list []string, want string) bool {
	for _, x := range list {
		if x == want {
			return true
		}
	}
	return false
}

func count(list []string, want string) int {
	n := 0
	for _, x := range list {
		if x == want {
			n++
		}
	}
	return n
}

func expect(t *testing.T, ok bool, what string, r replyT) {
	t.Helper()
	if !ok {
		b, _ := json.Marshal(r)
		t.Fatalf("%s; reply: %s", what, b)
	}
}

const (
	firstList = "limit=500&resourceVersion=0"
	watch5    = "resourceVersion=5&timeoutSeconds=" // after watchPrefix
)

// listWatchScript is the conversation of TestListWatch, for the determinism tests too.
func listWatchScript(t *testing.T, p *proc) {
	r := p.do(start(7, 2))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "the first request is a LIST from RV 0", r)
	expect(t, r.Timer == nil && !r.Synced, "no timer while the LIST waits", r)

	r = p.do(list(5, "", cm("a", 2, 2, 1), cm("b", 3, 3, 1)))
	expect(t, r.Synced && r.RV == "5" && len(r.Cache) == 2, "synced at RV 5 with two objects", r)
	expect(t, count(kinds(r), "add") == 2, "two adds", r)
	expect(t, len(sends(r)) == 1 && strings.HasPrefix(sends(r)[0], watchPrefix+watch5), "a WATCH from RV 5", r)
	expect(t, r.Ready[0] == false && r.Ready[1] == false, "waiters wait for the next poll", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "poll" && r.Timer.AfterMs > 0 && r.Timer.AfterMs <= 100,
		"the next timer is WaitForCacheSync's poll", r)

	r = p.do(fire(r))
	expect(t, r.Ready[0] && r.Ready[1] && len(r.Effects) == 0, "the poll tick readies the waiters", r)
	expect(t, r.Timer == nil, "no timer while the watch waits", r)

	r = p.do(cmdOnly("open"))
	expect(t, len(r.Effects) == 0 && r.Unread == 0, "open changes nothing", r)

	r = p.do(event("ADDED", cm("c", 6, 6, 1)))
	expect(t, has(kinds(r), "add") && r.RV == "6" && len(r.Cache) == 3, "ADDED c", r)
	expect(t, len(r.Read) == 1 && r.Read[0] == 0 && r.Unread == 0, "line 0 read", r)

	r = p.do(event("MODIFIED", cm("a", 2, 7, 2)))
	expect(t, has(kinds(r), "update") && r.RV == "7", "MODIFIED a", r)
	expect(t, bytes.Contains(r.Effects[0].Notify.Old, []byte(`"resourceVersion":"2"`)), "update carries the old object", r)

	r = p.do(event("DELETED", cm("b", 3, 8, 1)))
	expect(t, has(kinds(r), "delete") && r.RV == "8" && len(r.Cache) == 2, "DELETED b", r)

	r = p.do(bookmark(9, false))
	expect(t, len(r.Effects) == 0 && r.RV == "9", "a BOOKMARK moves the RV only", r)

	r = p.do(cmdOnly("end"))
	expect(t, len(sends(r)) == 1 && strings.HasPrefix(sends(r)[0], watchPrefix+"resourceVersion=9&"),
		"a clean end re-watches from the last RV at once", r)

	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	expect(t, has(kinds(r), "cancel") && len(sends(r)) == 0, "a 410 ends the watch", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs >= 800 && r.Timer.AfterMs <= 1600,
		"then the reflector backs off", r)

	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == relistQuery, "and relists (from its last RV since v0.18)", r)

	r = p.do(list(10, "", cm("a", 2, 7, 2)))
	expect(t, count(kinds(r), "delete-unknown") == 1 && len(r.Cache) == 1 && r.RV == "10",
		"the relist deletes c with a tombstone", r)
	expect(t, has(sends(r)[0:1], sends(r)[0]) && strings.Contains(sends(r)[0], "resourceVersion=10&"), "and watches from RV 10", r)

	r = p.do(cmdOnly("stop"))
	expect(t, r.Stopped, "stopped", r)
}

func TestListWatch(t *testing.T) {
	listWatchScript(t, spawn(t, false))
}

// The same script twice in one process, and once in another: byte-identical replies.
func TestDeterministic(t *testing.T) {
	p := spawn(t, false)
	listWatchScript(t, p)
	n := len(p.lines)
	listWatchScript(t, p)
	q := spawn(t, false)
	listWatchScript(t, q)
	for i := range n {
		if p.lines[i] != p.lines[n+i] {
			t.Fatalf("reply %d differs between sessions in one process:\n%s\n%s", i, p.lines[i], p.lines[n+i])
		}
		if p.lines[i] != q.lines[i] {
			t.Fatalf("reply %d differs between processes:\n%s\n%s", i, p.lines[i], q.lines[i])
		}
	}
}

func TestBreakDuringList(t *testing.T) {
	p := spawn(t, false)
	r := p.do(start(1, 1))
	r = p.do(cmdOnly("break"))
	expect(t, len(r.Effects) == 0, "nothing at once", r)
	// The REST client retries a reset GET itself after 1 s (as if Retry-After: 1).
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs == 1000, "a 1 s retry", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "the fire delivers the next LIST", r)
	r = p.do(cmdOnly("refuse"))
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs >= 800 && r.Timer.AfterMs <= 1600,
		"the reflector's backoff after a refused LIST", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1, "the next request", r)
	r = p.do(m{"cmd": "respond", "status": 429, "body": status(429, "TooManyRequests", "storage is (re)initializing"), "retry_after": 1})
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs == 1000, "a 429 waits its Retry-After", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1, "the retry", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced && !r.Ready[0], "synced", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "poll", "the poll, on its own phase", r)
	r = p.do(fire(r))
	expect(t, r.Ready[0], "ready at the tick", r)
}

// A watch refused before the waiters' next poll: the probe meets the poll tick first.
func TestProbeMeetsPoll(t *testing.T) {
	p := spawn(t, false)
	p.do(start(1, 1))
	r := p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced && r.Timer != nil && r.Timer.Kind == "poll" && r.Timer.AfterMs == 100, "poll first", r)
	r = p.do(cmdOnly("refuse"))
	expect(t, r.Timer != nil && r.Timer.Kind == "poll" && r.Timer.AfterMs == 100 && !r.Ready[0],
		"the probe stops at the poll tick; the reply shows the state before it", r)
	r = p.do(fire(r))
	expect(t, r.Ready[0] && len(r.Effects) == 0, "the fire shows the waiter ready", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff", "then the reflector's backoff", r)
	r = p.do(fire(r))
	if refusedWatchRelists {
		expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "a relist after a refused watch (before v0.16)", r)
		return
	}
	expect(t, len(sends(r)) == 1 && strings.HasPrefix(sends(r)[0], watchPrefix+watch5), "re-watch from RV 5 after a refused watch", r)
}

// watchListModes are the WatchListClient settings this release can run with.
func watchListModes() []bool {
	if watchListGate {
		return []bool{false, true}
	}
	return []bool{false}
}

func TestWatchListInitialEventsEnd(t *testing.T) {
	if !watchListGate {
		t.Skip("this client-go release has no WatchListClient gate (v0.31 and later)")
	}
	p := spawn(t, true)
	r := p.do(start(3, 1))
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "sendInitialEvents=true") &&
		strings.Contains(sends(r)[0], "watch=true"), "a streaming list first", r)
	t.Logf("first request with WatchListClient on: %s", sends(r)[0])
	r = p.do(event("ADDED", cm("a", 2, 2, 1)))
	r = p.do(event("ADDED", cm("b", 3, 3, 1)))
	expect(t, !r.Synced && len(r.Cache) == 0 && len(kinds(r)) == 0, "initial events wait in a temporary store", r)
	r = p.do(bookmark(5, true))
	expect(t, r.Synced && r.RV == "5" && len(r.Cache) == 2 && count(kinds(r), "add") == 2,
		"the initial-events-end bookmark syncs", r)
	expect(t, len(sends(r)) == 0, "and the same stream goes on", r)
	r = p.do(event("MODIFIED", cm("a", 2, 6, 2)))
	expect(t, has(kinds(r), "update") && r.RV == "6", "events after the bookmark", r)
	r = p.do(cmdOnly("stop"))
	expect(t, r.Stopped, "stopped", r)
}

func TestClientTimeout(t *testing.T) {
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 0, "timeout_ms": 2500})
	expect(t, r.Timer != nil && r.Timer.Kind == "request-timeout" && r.Timer.AfterMs == 2500, "the LIST's timeout", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Timer != nil && r.Timer.Kind == "request-timeout" && r.Timer.AfterMs == 2500, "the WATCH's timeout", r)
	r = p.do(cmdOnly("open"))
	r = p.do(fire(r))
	expect(t, has(kinds(r), "cancel"), "the client cancels the watch at its timeout", r)
	t.Logf("after a client-side watch timeout: %v %v timer %+v", kinds(r), sends(r), r.Timer)
}

func TestPageSize(t *testing.T) {
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 1, "timeout_ms": 0})
	expect(t, len(sends(r)) == 1 && sends(r)[0] == "limit=1&resourceVersion=0", "the first page", r)
	r = p.do(list(5, "lw.5.0", cm("a", 2, 2, 1)))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == continueQuery, "the next page", r)
	r = p.do(list(5, "", cm("b", 3, 3, 1)))
	expect(t, r.Synced && len(r.Cache) == 2, "both pages", r)

	// A continued page that expired: the pager falls back to one LIST without a limit.
	q := spawn(t, false)
	q.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 1, "timeout_ms": 0})
	q.do(list(5, "lw.5.0", cm("a", 2, 2, 1)))
	r = q.do(m{"cmd": "respond", "status": 410, "body": status(410, "Expired", "the provided continue parameter is too old"), "retry_after": nil})
	expect(t, len(sends(r)) == 1 && sends(r)[0] == "resourceVersion=0", "the pager's full LIST", r)
}

func TestMalformed(t *testing.T) {
	p := spawn(t, false)
	line := p.raw(`{"cmd":"dance"}`)
	if !strings.HasPrefix(line, `{"error":`) {
		t.Fatalf("reply %q", line)
	}
	err := p.cmd.Wait()
	if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 2 {
		t.Fatalf("exit: %v", err)
	}
}

// bigScript lists many objects, relists without most of them, and ends in a backoff: the
// delete-unknown run must come out sorted, and everything in the same order every time.
func bigScript(t *testing.T, p *proc) {
	var items []string
	for i := range 60 {
		items = append(items, cm(fmt.Sprintf("k%d", i+1), i+2, i+2, 1))
	}
	r := p.do(start(11, 3))
	r = p.do(list(70, "", items...))
	expect(t, count(kinds(r), "add") == 60, "60 adds", r)
	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	expect(t, r.Timer != nil && r.Timer.Kind == "poll", "the waiters' poll comes first", r)
	r = p.do(fire(r))
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && len(r.Effects) == 0, "then the backoff", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1, "the relist", r)
	r = p.do(list(80, "", items[:5]...))
	expect(t, count(kinds(r), "delete-unknown") == 55, "55 tombstones", r)
	var last string
	for _, e := range r.Effects {
		if e.Notify != nil && e.Notify.Kind == "delete-unknown" {
			var o struct {
				Metadata struct{ Name string }
			}
			json.Unmarshal(e.Notify.Object, &o)
			expect(t, o.Metadata.Name > last, "tombstones sorted by key", r)
			last = o.Metadata.Name
		}
	}
	r = p.do(cmdOnly("break"))
	r = p.do(fire(r))
	r = p.do(cmdOnly("stop"))
}

func TestDeterministicAcrossSessions(t *testing.T) {
	p := spawn(t, false)
	listWatchScript(t, p) // a different session first
	n := len(p.lines)
	bigScript(t, p)
	q := spawn(t, false)
	bigScript(t, q)
	for i := range q.lines {
		if p.lines[n+i] != q.lines[i] {
			t.Fatalf("reply %d differs:\n%s\n%s", i, p.lines[n+i], q.lines[i])
		}
	}
}

// stop works in every state, and a new session starts afterwards.
func TestStopAnywhere(t *testing.T) {
	for _, watchList := range watchListModes() {
		p := spawn(t, watchList)
		scripts := [][]m{
			{},                  // a request pending
			{cmdOnly("open")},   // a body open
			{cmdOnly("refuse")}, // in a backoff (probed)
			{cmdOnly("break")},  // in the REST client's retry wait
			{m{"cmd": "respond", "status": 500, "body": status(500, "InternalError", "an error on the server"), "retry_after": nil}},
			{list(5, "", cm("a", 2, 2, 1))},
		}
		for _, s := range scripts {
			p.do(start(5, 1))
			for _, c := range s {
				p.do(c)
			}
			r := p.do(cmdOnly("stop"))
			expect(t, r.Stopped, "stopped", r)
		}
	}
}

// Wire commands between a probe's reply and its fire reach nothing: the request the probe saw sent
// is not visible yet.
func TestCommandsDuringProbe(t *testing.T) {
	p := spawn(t, false)
	p.do(start(1, 0))
	r := p.do(cmdOnly("refuse"))
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff", "a backoff", r)
	want := *r.Timer
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, len(r.Effects) == 0 && !r.Synced && r.Timer != nil && *r.Timer == want, "nothing changed", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "the LIST comes with the fire", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced, "and it can be answered", r)
}

// Garbage collection at other moments must not change a reply.
func TestDeterministicUnderGC(t *testing.T) {
	p := spawn(t, false)
	bigScript(t, p)
	listWatchScript(t, p)
	q := spawn(t, false, "GOGC=1")
	bigScript(t, q)
	listWatchScript(t, q)
	for i := range p.lines {
		if p.lines[i] != q.lines[i] {
			t.Fatalf("reply %d differs:\n%s\n%s", i, p.lines[i], q.lines[i])
		}
	}
}

// The watchdog end to end: with a 1 ms limit, a start with thousands of waiters is "stuck".
func TestStuckReply(t *testing.T) {
	p := spawn(t, false, "LISTWATCH_SHIM_STUCK_MS=1")
	line := p.raw(`{"cmd":"start","seed":1,"waiters":20000,"page_size":0,"timeout_ms":0}`)
	if !strings.HasPrefix(line, `{"stuck":"start: `) {
		t.Fatalf("reply %q", line)
	}
	err := p.cmd.Wait()
	if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 3 {
		t.Fatalf("exit: %v", err)
	}
}

// TestAdvance: time that passes with no timer of client-go's own (its transport finding a dead
// connection after 45 s) moves its clock, so the watch that then breaks is a long one: client-go
// re-watches from its RV at once. Without the advance it would be a watch shorter than 1 s with no
// event, which client-go backs off from and relists.
func TestAdvance(t *testing.T) {
	p := spawn(t, false)
	p.do(start(1, 1))
	r := p.do(list(5, "", cm("a", 2, 2, 1)))
	r = p.do(fire(r))
	expect(t, r.Ready[0] && r.Timer == nil, "ready, watching, no timer", r)
	r = p.do(cmdOnly("open"))
	r = p.do(m{"cmd": "advance", "ms": 45000})
	expect(t, len(r.Effects) == 0 && r.Halted == nil, "nothing happens while the connection is silent", r)
	r = p.do(cmdOnly("break"))
	expect(t, len(sends(r)) == 1 && strings.HasPrefix(sends(r)[0], watchPrefix+watch5), "a re-watch from RV 5 at once", r)
}

// A release with no WatchListClient gate refuses to run with it on, rather than list without it.
func TestWatchListRefused(t *testing.T) {
	if watchListGate {
		t.Skip("this client-go release has the WatchListClient gate")
	}
	p := spawn(t, true)
	line := p.raw(`{"cmd":"start","seed":1,"waiters":0,"page_size":0,"timeout_ms":0}`)
	if !strings.Contains(line, `"error"`) || !strings.Contains(line, "WatchListClient") {
		t.Fatalf("reply %s", line)
	}
}

// TestRetryWatcher: client-go's RetryWatcher, no LIST: a WATCH from the first revision, events into
// the consumer's store, a re-watch from the last RV after a clean end, and a 410 on the open watch is
// the end of it: the consumer returns and nothing is sent again.
func TestRetryWatcher(t *testing.T) {
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 0, "timeout_ms": 0, "mode": "retrywatcher"})
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "resourceVersion=1") &&
		strings.Contains(sends(r)[0], "watch=true"), "a WATCH from RV 1, no LIST", r)
	r = p.do(event("ADDED", cm("a", 2, 2, 1)))
	expect(t, has(kinds(r), "add") && r.RV == "2" && len(r.Cache) == 1 && !r.Synced, "ADDED a, never synced", r)
	r = p.do(event("MODIFIED", cm("a", 2, 3, 2)))
	expect(t, has(kinds(r), "update") && r.RV == "3", "MODIFIED a", r)
	r = p.do(cmdOnly("end"))
	if len(sends(r)) == 0 {
		expect(t, r.Timer != nil, "a re-watch is due", r)
		r = p.do(fire(r))
	}
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "resourceVersion=3"), "re-watch from RV 3", r)
	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	if r.Timer != nil {
		r = p.do(fire(r))
	}
	expect(t, len(sends(r)) == 0 && r.Timer == nil, "after a 410 on the open watch, nothing more", r)
	expect(t, r.RV == "3" && len(r.Cache) == 1, "the cache stays as it was", r)
}

// TestHeldConsumer: mode fifo, a controller over a DeltaFIFO whose consumer the harness holds. An
// ADDED b waits in the queue while a 410 ends the watch and the relist no longer has b; released,
// the consumer pops b's ADD. A DeltaFIFO that also finds deletions among its queued keys (from
// v0.26.4, PR #115620) queues a tombstone behind it; before that, b stays in the cache, leaked.
func TestHeldConsumer(t *testing.T) {
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 1, "page_size": 0, "timeout_ms": 0, "mode": "fifo"})
	expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "the first request is a LIST from RV 0", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced && has(kinds(r), "add") && len(r.Cache) == 1 && r.Queued == 0, "a is popped at once", r)
	r = p.do(fire(r))
	expect(t, r.Ready[0], "the waiter is ready", r)
	r = p.do(cmdOnly("open"))
	r = p.do(cmdOnly("hold"))
	expect(t, len(r.Effects) == 0, "holding changes nothing yet", r)
	r = p.do(event("ADDED", cm("b", 6, 6, 1)))
	expect(t, len(r.Effects) == 0 && len(r.Cache) == 1 && r.Queued == 1 && r.RV == "6",
		"b's ADD waits in the queue; the reflector's RV moved", r)
	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	expect(t, has(kinds(r), "cancel") && r.Timer != nil && r.Timer.Kind == "backoff", "a 410 ends the watch", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1, "the relist", r)
	r = p.do(list(8, "", cm("a", 2, 2, 1)))
	expect(t, len(r.Cache) == 1 && r.Queued == 2 && !has(kinds(r), "add"), "the relist's Replace waits in the queue too", r)
	r = p.do(cmdOnly("release"))
	expect(t, r.Queued == 0 && has(kinds(r), "add"), "released, the consumer pops everything", r)
	if replaceMissesQueued {
		expect(t, len(r.Cache) == 2 && !has(kinds(r), "delete-unknown"), "b is leaked (PR #115620 not in this release)", r)
	} else {
		expect(t, len(r.Cache) == 1 && has(kinds(r), "delete-unknown"), "b's ADD is followed by its tombstone", r)
	}
}

// TestHoldRefused: hold needs mode fifo and an open request.
func TestHoldRefused(t *testing.T) {
	p := spawn(t, false)
	p.do(start(1, 0))
	r := p.raw(`{"cmd":"hold"}`)
	if !strings.Contains(r, "no consumer to hold") {
		t.Fatalf("hold outside mode fifo: %s", r)
	}
}

// A15 on a LIST, as client-go meets them (C11): a 503 with Retry-After is the REST client's to wait
// out and send again; a 503 without it, a 401 and a body cut short are the reflector's to back off from.
func TestStatusesOnAList(t *testing.T) {
	p := spawn(t, false)
	r := p.do(start(1, 1))
	r = p.do(m{"cmd": "respond", "status": 503, "body": status(503, "ServiceUnavailable", "the server is currently unable to handle the request"), "retry_after": 1})
	expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs == 1000, "a 503 waits its Retry-After", r)
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == firstList, "the same LIST again", r)
	for _, answer := range []m{
		{"cmd": "respond", "status": 503, "body": status(503, "ServiceUnavailable", "the server is currently unable to handle the request"), "retry_after": nil},
		{"cmd": "respond", "status": 401, "body": status(401, "Unauthorized", "Unauthorized"), "retry_after": nil},
		{"cmd": "cut", "status": 200, "body": `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"`, "length": 4096},
	} {
		r = p.do(answer)
		expect(t, r.Timer != nil && r.Timer.Kind == "backoff" && r.Timer.AfterMs >= 800,
			fmt.Sprintf("the reflector's backoff after %v", answer["status"]), r)
		r = p.do(fire(r))
		expect(t, len(sends(r)) == 1, "the next LIST", r)
	}
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced, "synced once a LIST is answered whole", r)
}

// TestBareReflector: mode reflector, a Reflector into a Store with no informer. Its LIST and events
// reach the store, it claims their RV, and it tells nobody: no notifications, never synced.
func TestBareReflector(t *testing.T) {
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 0, "timeout_ms": 0, "mode": "reflector"})
	expect(t, len(sends(r)) == 1 && !strings.Contains(sends(r)[0], "watch=true"), "a LIST first", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1), cm("b", 4, 4, 1)))
	notified := func(r replyT) bool { return has(kinds(r), "add") || has(kinds(r), "update") || has(kinds(r), "delete") }
	expect(t, r.RV == "5" && len(r.Cache) == 2 && !r.Synced && !notified(r),
		"the store holds the list, with no notification and no sync", r)
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "watch=true"), "then a WATCH", r)
	r = p.do(event("DELETED", cm("a", 2, 6, 1)))
	expect(t, r.RV == "6" && len(r.Cache) == 1 && !notified(r), "DELETED a reaches the store", r)
}

// startMode starts a session of one waiter in mode, with the streaming list off: its first reply.
func startMode(t *testing.T, mode string) (*proc, replyT) {
	p := spawn(t, false)
	c := start(1, 1)
	c["mode"] = mode
	return p, p.do(c)
}

// TestIndexerInformer: mode indexer-informer, cache.NewIndexerInformer. Its handler runs inside the
// controller's Pop: a LIST answered whole adds each object to the indexer and tells the handler, and
// the controller has synced once its queue gave out the list; a DELETED then reaches both.
func TestIndexerInformer(t *testing.T) {
	p, r := startMode(t, "indexer-informer")
	expect(t, len(sends(r)) == 1 && !strings.Contains(sends(r)[0], "watch=true"), "a LIST first", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1), cm("b", 4, 4, 1)))
	expect(t, r.RV == "5" && len(r.Cache) == 2 && r.Synced, "the indexer holds the list and the controller synced", r)
	expect(t, count(kinds(r), "add") == 2, "the handler was told of both objects", r)
	r = p.do(event("DELETED", cm("a", 2, 6, 1)))
	expect(t, r.RV == "6" && len(r.Cache) == 1 && has(kinds(r), "delete"), "DELETED a reaches the indexer and the handler", r)
}

// TestInformerWatcher: mode informer-watcher, tools/watch's NewIndexerInformerWatcher. Its consumer
// learns the list as ADDED events and a delete the watch missed, after a relist, as a plain DELETED.
func TestInformerWatcher(t *testing.T) {
	if !zeroResyncInBubble {
		t.Skip("NewIndexerInformerWatcher runs in a bubble from client-go v0.35 (compat_resync_pre35.go)")
	}
	p, r := startMode(t, "informer-watcher")
	expect(t, len(sends(r)) == 1 && !strings.Contains(sends(r)[0], "watch=true"), "a LIST first", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1), cm("b", 4, 4, 1)))
	expect(t, r.RV == "5" && len(r.Cache) == 2 && r.Synced && count(kinds(r), "add") == 2,
		"the consumer got both objects as ADDED and the informer synced", r)
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "watch=true"), "then a WATCH", r)
	r = p.do(fire(r)) // the poll that readies the waiter
	r = p.do(cmdOnly("open"))
	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && !strings.Contains(sends(r)[0], "watch=true"), "a 410, a backoff: a relist", r)
	r = p.do(list(7, "", cm("b", 4, 4, 1)))
	expect(t, len(r.Cache) == 1 && has(kinds(r), "delete") && !has(kinds(r), "delete-unknown"),
		"a deleted the watch missed comes out as a plain DELETED", r)
	r = p.do(cmdOnly("stop"))
	expect(t, r.Stopped, "the session stops, its consumer with it", r)
}

// TestControllerRuntime: mode controller-runtime, controller-runtime's cache as a manager starts it:
// cluster-wide, so its LIST goes to /api/v1/configmaps; once the list is answered the Reader lists what
// it holds, the handler was told, and WaitForCacheSync returns at its next poll.
func TestControllerRuntime(t *testing.T) {
	if !hasControllerRuntime {
		t.Skip("built without controller-runtime (the shim's own release only)")
	}
	p, r := startMode(t, "controller-runtime")
	expect(t, len(r.Effects) == 1 && r.Effects[0].Send != nil && r.Effects[0].Send.Path == "/api/v1/configmaps" &&
		r.Effects[0].Send.Query == firstList, "a cluster-wide LIST first", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1), cm("b", 4, 4, 1)))
	expect(t, r.RV == "5" && r.Synced && len(r.Cache) == 2 && count(kinds(r), "add") == 2,
		"synced, the Reader lists both objects, the handler was told of both", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "poll", "WaitForCacheSync polls", r)
	r = p.do(fire(r))
	expect(t, r.Ready[0], "the waiter returned", r)
	r = p.do(cmdOnly("stop"))
	expect(t, r.Stopped, "the session stops, the cache with it", r)

	// With watch_error_handler, the cache's DefaultWatchErrorHandler tells of a refused LIST.
	c := start(1, 1)
	c["mode"], c["watch_error_handler"] = "controller-runtime", true
	p.do(c)
	r = p.do(m{"cmd": "respond", "status": 403, "body": status(403, "Forbidden", "configmaps is forbidden"), "retry_after": nil})
	expect(t, count(kinds(r), "told") == 1 && r.Timer != nil, "a 403 on the LIST is told, then backed off from", r)
}

// TestTransformTwiceOnAStreamingList: with the strict transform (transform.go), a LIST syncs the
// informer; a streaming list does not, because the reflector's temporary store transforms each object
// and the queue's Replace transforms it again (client-go's watchList, read at v0.37.2).
func TestTransformTwiceOnAStreamingList(t *testing.T) {
	if !hasSetTransform {
		t.Skip("this client-go release has no SetTransform (v0.24 and later)")
	}
	withTransform := func(seed uint64) m {
		c := start(seed, 1)
		c["transform"] = true
		return c
	}
	p := spawn(t, false)
	r := p.do(withTransform(1))
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced && len(r.Cache) == 1, "a LIST goes through the transform once and syncs", r)
	if !watchListGate {
		return
	}
	q := spawn(t, true)
	r = q.do(withTransform(2))
	r = q.do(event("ADDED", cm("a", 2, 2, 1)))
	r = q.do(bookmark(5, true))
	expect(t, !r.Synced && len(r.Cache) == 0, "the Replace after the bookmark meets transformed objects", r)
}

// TestPanicHandler: with panic_handler the handler panics on its first notification, an object of
// the first list. client-go recovers it (ReallyCrash is false), tells the handler of the next object
// a second later, and the handler's registration never reports synced, so its waiter never returns
// although the informer has synced (kubernetes#129024: processorListener.run calls
// syncTracker.Finished after OnAdd, which the panic skips; read at v0.37.2).
func TestPanicHandler(t *testing.T) {
	if !hasRegistrationSynced {
		t.Skip("this client-go release's handler registrations have no HasSynced (v0.27 and later)")
	}
	withPanic := func(seed uint64, waiters int) m {
		c := start(seed, waiters)
		c["panic_handler"] = true
		return c
	}
	listed := list(5, "", cm("a", 2, 2, 1), cm("b", 4, 4, 1))
	// No waiter: the listener's sleep is the only timer while the watch is open.
	p := spawn(t, false)
	r := p.do(withPanic(1, 0))
	r = p.do(listed)
	expect(t, r.Synced && len(r.Cache) == 2, "the informer synced", r)
	expect(t, count(kinds(r), "add") == 1, "the handler was told of one object, then panicked", r)
	expect(t, r.Timer != nil && r.Timer.Kind == "handler-retry" && r.Timer.AfterMs == 1000,
		"the handler's next notification waits a second", r)
	r = p.do(fire(r))
	expect(t, count(kinds(r), "add") == 1 && r.Timer == nil, "the other object, a second after the panic", r)
	// A waiter on the handler's registration: it polls for ever.
	q := spawn(t, false)
	r = q.do(withPanic(2, 1))
	r = q.do(listed)
	for i := 0; i < 30; i++ {
		expect(t, r.Timer != nil, "a timer: the waiter's poll or the listener's sleep", r)
		r = q.do(fire(r))
		expect(t, len(r.Ready) == 1 && !r.Ready[0], "the registration never synced", r)
	}
}

// TestResync: with a resync period, the informer tells its handler of every cached object again, as
// an update from the object to itself, once the period has passed on its own clock. The harness is
// told of no timer for it: the updates come with the step in which the period ran out, in key order,
// and halt nothing.
func TestResync(t *testing.T) {
	p := spawn(t, false)
	c := start(1, 1)
	c["resync_ms"] = 30000
	p.do(c)
	r := p.do(list(5, "", cm("b", 3, 3, 1), cm("a", 2, 2, 1)))
	r = p.do(fire(r))
	expect(t, r.Ready[0] && r.Timer == nil, "ready, watching, no timer reported for the resync", r)
	r = p.do(cmdOnly("open"))
	r = p.do(m{"cmd": "advance", "ms": 29000})
	expect(t, len(r.Effects) == 0, "no resync before the period", r)
	r = p.do(m{"cmd": "advance", "ms": 2000})
	expect(t, count(kinds(r), "update") == 2 && len(r.Effects) == 2, "a resync updates each object", r)
	for i, name := range []string{"a", "b"} {
		n := r.Effects[i].Notify
		expect(t, bytes.Equal(n.Old, n.Object) && bytes.Contains(n.Object, []byte(`"name":"`+name+`"`)),
			"from the object to itself, in key order", r)
	}
	expect(t, len(r.Cache) == 2 && r.RV == "5", "the cache and RV stay", r)
	r = p.do(event("MODIFIED", cm("a", 2, 6, 2)))
	expect(t, count(kinds(r), "update") == 1 && r.RV == "6", "a watch event is told as before", r)
	r = p.do(m{"cmd": "advance", "ms": 30000})
	expect(t, count(kinds(r), "update") == 2, "the next period resyncs again", r)
}

// handlerKinds lists the notifications of one handler as short words.
func handlerKinds(r replyT, handler int) []string {
	var k []string
	for _, e := range r.Effects {
		if e.Notify != nil && e.Notify.Handler == handler {
			k = append(k, e.Notify.Kind)
		}
	}
	return k
}

// TestHandlers: with three handlers, each is told everything, its notifications reported as its
// own after the first handler's; with a resync period, the k-th (from 0) resyncs every k+1 periods.
func TestHandlers(t *testing.T) {
	p := spawn(t, false)
	c := start(1, 1)
	c["resync_ms"] = 10000
	c["handlers"] = 3
	p.do(c)
	r := p.do(list(5, "", cm("a", 2, 2, 1)))
	for h := 0; h < 3; h++ {
		expect(t, len(handlerKinds(r, h)) == 1 && handlerKinds(r, h)[0] == "add", "each handler is told of the list", r)
	}
	last := -1
	for _, e := range r.Effects {
		if e.Notify != nil {
			expect(t, e.Notify.Handler >= last, "handler by handler", r)
			last = e.Notify.Handler
		}
	}
	r = p.do(fire(r))
	r = p.do(cmdOnly("open"))
	r = p.do(event("MODIFIED", cm("a", 2, 6, 2)))
	for h := 0; h < 3; h++ {
		expect(t, len(handlerKinds(r, h)) == 1 && handlerKinds(r, h)[0] == "update", "each handler is told of the event", r)
	}
	resyncs := [3]int{}
	for i := 0; i < 6; i++ {
		r = p.do(m{"cmd": "advance", "ms": 10000})
		for h := 0; h < 3; h++ {
			resyncs[h] += len(handlerKinds(r, h))
		}
	}
	t.Logf("resyncs per handler in 60 s: %v", resyncs)
	expect(t, resyncs[0] >= 5 && resyncs[1] >= 2 && resyncs[1] <= 3 && resyncs[2] == 2,
		fmt.Sprintf("in 60 s handler 0 resyncs about every 10 s, 1 every 20 s, 2 every 30 s: %v", resyncs), r)
}

// TestPager: mode "pager,match=Exact", an informer whose list function lists through tools/pager in
// pages of 1 with resourceVersionMatch=Exact. The first LIST, from RV "0", goes without the match
// (Exact is refused with "0"); a relist from RV 9 asks for exactly 9, and its continued page drops
// the resourceVersion (and, from PR #107311, the match). The caller's list reaches the informer as
// one list at the first page's RV.
func TestPager(t *testing.T) {
	if !pagerModes {
		t.Skip("the pager's configurations need ListOptions.ResourceVersionMatch (client-go v0.19)")
	}
	p := spawn(t, false)
	r := p.do(m{"cmd": "start", "seed": 1, "waiters": 0, "page_size": 1, "timeout_ms": 0, "mode": "pager,match=Exact"})
	expect(t, len(sends(r)) == 1 && sends(r)[0] == "limit=1&resourceVersion=0", "the first page, with no match for RV 0", r)
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, r.Synced && r.RV == "5" && len(r.Cache) == 1, "one page: the list", r)
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "watch=true"), "then a WATCH", r)
	p.do(cmdOnly("open"))
	r = p.do(bookmark(9, false))
	expect(t, r.RV == "9", "a BOOKMARK at 9", r)
	r = p.do(event("ERROR", status(410, "Expired", "too old resource version")))
	r = p.do(fire(r))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == "limit=1&resourceVersion=9&resourceVersionMatch=Exact",
		"the relist asks for exactly the last RV", r)
	r = p.do(list(9, "lw.9.0", cm("a", 2, 2, 1)))
	expect(t, len(sends(r)) == 1 && sends(r)[0] == pagerContinueQuery, "the continued page", r)
	r = p.do(list(9, "", cm("b", 4, 4, 1)))
	expect(t, r.RV == "9" && len(r.Cache) == 2 && has(kinds(r), "add"), "both pages reach the informer at RV 9", r)

	// An unknown option is refused by name.
	q := spawn(t, false)
	line := q.raw(`{"cmd":"start","seed":1,"waiters":0,"page_size":1,"timeout_ms":0,"mode":"pager,match=Newest"}`)
	expect(t, strings.Contains(line, `unknown pager option \"match=Newest\"`), "the option named: "+line, replyT{})
}

// TestWatchErrorHandler: with watch_error_handler the informer's SetWatchErrorHandler tells the
// harness of what its reflector returns from ListAndWatch (a failed LIST, a WATCH refused other than
// with a 429 or a refused connection), before the backoff, and nothing of what the REST client sends
// again itself (a Retry-After). Without it nothing is told.
func TestWatchErrorHandler(t *testing.T) {
	if !pagerModes {
		t.Skip("SetWatchErrorHandler needs client-go v0.19")
	}
	forbidden := m{"cmd": "respond", "status": 403, "body": status(403, "Forbidden", "configmaps is forbidden"), "retry_after": nil}
	p := spawn(t, false)
	c := start(1, 1)
	c["watch_error_handler"] = true
	r := p.do(c)
	r = p.do(m{"cmd": "respond", "status": 503, "body": status(503, "ServiceUnavailable", "the server is currently unable to handle the request"), "retry_after": 1})
	expect(t, !has(kinds(r), "told"), "a Retry-After is the REST client's to wait out: nothing told", r)
	r = p.do(fire(r))
	r = p.do(forbidden)
	expect(t, has(kinds(r), "told") && r.Timer != nil && r.Timer.Kind == "backoff", "a 403 on the LIST is told, then backed off from", r)
	expect(t, strings.Contains(r.Effects[0].Told.Error, "forbidden"), "the error told is the LIST's", r)
	r = p.do(fire(r))
	r = p.do(list(5, "", cm("a", 2, 2, 1)))
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "watch=true"), "then a WATCH", r)
	r = p.do(m{"cmd": "respond", "status": 429, "body": status(429, "TooManyRequests", "too many requests"), "retry_after": nil})
	expect(t, !has(kinds(r), "told"), "a 429 on the WATCH is backed off from and watched again: nothing told", r)
	for i := 0; i < 3 && len(sends(r)) == 0; i++ {
		expect(t, !has(kinds(r), "told"), "nothing told while it waits", r)
		r = p.do(fire(r))
	}
	expect(t, len(sends(r)) == 1 && strings.Contains(sends(r)[0], "watch=true"), "the WATCH again", r)
	r = p.do(forbidden)
	expect(t, count(kinds(r), "told") == 1, "a 403 on the WATCH is told", r)

	q := spawn(t, false)
	q.do(start(1, 1))
	r = q.do(forbidden)
	expect(t, !has(kinds(r), "told") && r.Timer != nil, "no handler set: nothing told", r)

	// The DeltaFIFO controller: its Config.WatchErrorHandler.
	c = start(1, 1)
	c["mode"], c["watch_error_handler"] = "fifo", true
	f := spawn(t, false)
	f.do(c)
	r = f.do(forbidden)
	expect(t, count(kinds(r), "told") == 1 && r.Timer != nil, "fifo: a 403 on the LIST is told, then backed off from", r)
}
