package listwatchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// pollPeriod is WaitForCacheSync's poll interval (client-go tools/cache syncedPollPeriod): its
// wait.PollImmediateUntil checks once at once, then on a time.Ticker started right after that
// first check, so the ticks fall at start + k*100ms.
const pollPeriod = 100 * time.Millisecond

// probeCap bounds a probe: nothing observable within it reports `timer: null`.
const probeCap = time.Hour

type sendEffect struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query"`
}

type notifyEffect struct {
	// Handler is which of the code's handlers was told (Env.HandlerFor); 0 is left out.
	Handler int             `json:"handler,omitempty"`
	Kind    string          `json:"kind"`
	Object  json.RawMessage `json:"object"`
	Old     json.RawMessage `json:"old,omitempty"`
}

// toldEffect is a failure the code told its user of (Env.Told).
type toldEffect struct {
	Error string `json:"error"`
}

type effect struct {
	Send   *sendEffect   `json:"send,omitempty"`
	Cancel *struct{}     `json:"cancel,omitempty"`
	Notify *notifyEffect `json:"notify,omitempty"`
	Told   *toldEffect   `json:"told,omitempty"`
	key    string        // namespace/name of a notification, for sorting runs (see takeEffects)
	// sync: an update whose old and new objects are the same, with a resync period set: a resync's
	// (or a relist's of an unchanged object), which no timer the harness knows of need explain.
	sync bool
}

type timerJSON struct {
	Kind    string  `json:"kind"`
	AfterMs float64 `json:"after_ms"`
}

type replyJSON struct {
	Effects   []effect          `json:"effects"`
	RV        string            `json:"rv"`
	Synced    bool              `json:"synced"`
	Ready     []bool            `json:"ready"`
	Cache     []json.RawMessage `json:"cache"`
	Timer     *timerJSON        `json:"timer"`
	Unread    int               `json:"unread"`
	EndUnread bool              `json:"end_unread"`
	Read      []int             `json:"read"`
	Halted    *string           `json:"halted"`
	Queued    int               `json:"queued"`
	// Behind: notifications waiting at a held handler's gate (Env.Holdable); the cache is not behind.
	Behind int `json:"behind,omitempty"`
	// Holdable: the session has a consumer the harness can hold or release now (Env.Hold or
	// Env.Holdable, and a request is open: no probe ran ahead to the next timer).
	Holdable bool `json:"holdable"`
}

// state is what a reply says about client-go besides its effects and the next timer.
type state struct {
	rv        string
	synced    bool
	ready     []bool
	cache     []json.RawMessage
	unread    int
	endUnread bool
	read      []int
	queued    int
	behind    int
}

// probe is what a probe found: the timer it reported, the state before it, and the effects it held
// back for the next fire.
type probe struct {
	timer  timerJSON
	before state
	held   []effect
}

// deadline is the timer last reported while a request was open.
type deadline struct {
	kind string
	at   time.Time
}

// session is one run of a client under test, inside one synctest bubble.
type session struct {
	mu sync.Mutex
	// effects since the last reply, in the order they happened.
	effects []effect
	// acts are the fake times of every observable activity (a request, a cancel, a notification, a
	// waiter returning), in order.
	acts []time.Time
	// activity is signalled (never blocking) on every observable activity: a probe waits on it.
	activity chan struct{}
	cur      *conn
	lines    int   // `line` commands so far
	reads    []int // indices of lines read off bodies since the last reply
	ready    []bool
	stopped  chan struct{}
	halted   *string

	// Only the root goroutine touches these.
	view      View     // what the client shows (Env.Show)
	closers   []func() // what else shutdown stops, after the stop channel closes (Env.OnStop)
	fifo      Queue    // the consumer's backlog the harness can hold (Env.Hold)
	stop      chan struct{}
	cancel    context.CancelFunc
	waitStart time.Time
	waiting   sync.WaitGroup
	timer     *deadline // the timer reported while a request was open
	probed    *probe    // what a probe found, until the next fire
	retries   listenerSleeps
	// resyncs: the run has a resync period (Env.Resync), so sync updates come on a timer of the
	// informer's own.
	resyncs bool
}

// effect logs e. Called with s.mu held.
func (s *session) effect(e effect, key string) {
	e.key = key
	s.effects = append(s.effects, e)
	s.act()
}

// act records an observable activity. Called with s.mu held.
func (s *session) act() {
	s.acts = append(s.acts, time.Now())
	select {
	case s.activity <- struct{}{}:
	default:
	}
}

func objectJSON(obj any) (json.RawMessage, string) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(obj); err != nil {
		panic(fmt.Sprintf("marshalling %T: %v", obj, err))
	}
	key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return bytes.TrimRight(buf.Bytes(), "\n"), key
}

func (s *session) notify(handler int, kind string, obj, old any) {
	o, key := objectJSON(obj)
	n := &notifyEffect{Handler: handler, Kind: kind, Object: o}
	if old != nil {
		n.Old, _ = objectJSON(old)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resyncs && kind == "update" && bytes.Equal(n.Old, n.Object) {
		// A resync: its timer is the reflector's (resyncPeriod), which the harness is never told of;
		// it is no activity that a timer must explain, and it is taken with the step it fell in.
		s.effects = append(s.effects, effect{Notify: n, key: key, sync: true})
		return
	}
	s.effect(effect{Notify: n}, key)
}

// told records that the code told its user of err.
func (s *session) told(err error) {
	t := &toldEffect{}
	if err != nil {
		t.Error = err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.effect(effect{Told: t}, "")
}

// begin builds the client's config inside the bubble and starts the client.
func (s *session) begin(c command, client Client) error {
	s.activity = make(chan struct{}, 1)
	s.stopped = make(chan struct{})
	s.stop = make(chan struct{})
	s.ready = []bool{}
	s.waitStart = time.Now()
	cfg := &rest.Config{
		Host:      "http://listwatch.invalid",
		Transport: s,
		QPS:       -1,
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/json",
			AcceptContentTypes: "application/json",
		},
		// The HTTP client's timeout (http.Client.Timeout); 0 is none, client-go's default.
		Timeout: requestTimeout(c.TimeoutMs),
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	env := &Env{
		Config: cfg, Context: ctx, Stop: s.stop, Namespace: "default", Waiters: c.Waiters,
		Mode: c.Mode, PageSize: c.PageSize, Transform: c.Transform, PanicOnce: c.PanicOnce,
		SlowHandler: c.SlowHandler, WatchErrorHandler: c.WatchErrorHandler,
		Resync: time.Duration(c.ResyncMs) * time.Millisecond, Handlers: max(c.Handlers, 1), s: s,
	}
	s.resyncs = env.Resync > 0
	if err := client(env); err != nil {
		return err
	}
	if s.view == nil {
		return errors.New("the client showed nothing to judge: it must call env.Show before it returns")
	}
	return nil
}

// shutdown stops everything; the bubble's goroutines then exit.
func (s *session) shutdown() {
	close(s.stop)
	s.cancel()
	for _, f := range s.closers {
		f()
	}
	s.mu.Lock()
	close(s.stopped)
	if b := s.streaming(); b != nil {
		b.signal()
	}
	s.mu.Unlock()
	s.waiting.Wait()
}

// takeEffects returns the effects since the last call: the notifications of handlers after the
// first moved after the rest, handler by handler (each handler runs on a goroutine of its own, so how
// they interleave is the scheduler's), and each run of consecutive delete-unknown notifications, and
// each run of sync updates, sorted by key: a relist's deletes come out of a map, and a resync queues
// the keys of its store's map (DeltaFIFO.Resync's ListKeys).
func (s *session) takeEffects() []effect {
	s.mu.Lock()
	e := s.effects
	s.effects = nil
	s.mu.Unlock()
	sort.SliceStable(e, func(a, b int) bool { return e[a].handler() < e[b].handler() })
	sortRuns(e, func(x effect) bool { return x.Notify != nil && x.Notify.Kind == "delete-unknown" })
	sortRuns(e, func(x effect) bool { return x.sync })
	return e
}

// handler is which handler an effect's notification told; 0 for every other effect.
func (e effect) handler() int {
	if e.Notify == nil {
		return 0
	}
	return e.Notify.Handler
}

// sortRuns sorts each run of consecutive effects that are in by handler, then key.
func sortRuns(e []effect, in func(effect) bool) {
	for i := 0; i < len(e); {
		j := i
		for j < len(e) && in(e[j]) {
			j++
		}
		if j > i {
			run := e[i:j]
			sort.SliceStable(run, func(a, b int) bool {
				if run[a].handler() != run[b].handler() {
					return run[a].handler() < run[b].handler()
				}
				return run[a].key < run[b].key
			})
			i = j
		} else {
			i++
		}
	}
}

func (s *session) snapshot() state {
	st := state{
		rv:     s.view.LastSyncResourceVersion(),
		synced: s.view.HasSynced(),
	}
	objs := s.view.GetStore().List()
	type kv struct {
		key string
		obj json.RawMessage
	}
	items := make([]kv, 0, len(objs))
	for _, o := range objs {
		b, key := objectJSON(o)
		items = append(items, kv{key, b})
	}
	sort.Slice(items, func(a, b int) bool { return items[a].key < items[b].key })
	if g, ok := s.fifo.(*gate); ok {
		st.behind = g.Queued()
	} else if s.fifo != nil {
		st.queued = s.fifo.Queued()
	}
	st.cache = make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		st.cache = append(st.cache, it.obj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.ready = append([]bool{}, s.ready...)
	if c := s.cur; c != nil && c.body != nil && c.body.stream && !c.body.closed {
		st.unread = c.body.unread()
		st.endUnread = (c.body.ended || c.body.broken != nil) && !c.body.endRead
	}
	st.read = append([]int{}, s.reads...)
	s.reads = nil
	return st
}

// nextPoll is when WaitForCacheSync next polls, if that can be observed: the informer has synced
// and some waiter has not returned yet.
func (s *session) nextPoll(now time.Time) (time.Time, bool) {
	if !s.view.HasSynced() {
		return time.Time{}, false
	}
	s.mu.Lock()
	waiting := false
	for _, r := range s.ready {
		waiting = waiting || !r
	}
	s.mu.Unlock()
	if !waiting {
		return time.Time{}, false
	}
	k := now.Sub(s.waitStart)/pollPeriod + 1
	return s.waitStart.Add(k * pollPeriod), true
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// nextTimer says which timer fires next and after how long (see the package documentation).
func (s *session) nextTimer(before state) *timerJSON {
	now := time.Now()
	s.timer = nil
	poll, polls := s.nextPoll(now)
	s.mu.Lock()
	c := s.cur
	open := c != nil && !c.over
	s.mu.Unlock()
	if open {
		var next *deadline
		if at, ok := c.req.Context().Deadline(); ok {
			next = &deadline{"request-timeout", at}
		}
		if polls && (next == nil || poll.Before(next.at)) {
			next = &deadline{"poll", poll}
		}
		if at, ok := s.retries.next(now); ok && (next == nil || at.Before(next.at)) {
			next = &deadline{"handler-retry", at}
		}
		if next == nil {
			return nil
		}
		s.timer = next
		return &timerJSON{next.kind, ms(next.at.Sub(now))}
	}
	// No request is open: client-go is between requests (a backoff, a retry's wait). Nothing the
	// harness sends can reach it before its next request, since there is no connection to send on:
	// so advancing time to its first observable activity now, and holding back what that produced
	// until the harness fires the timer reported, shows the harness exactly what would happen.
	retryAt, retry := s.retries.next(now)
	s.mu.Lock()
	select {
	case <-s.activity:
	default:
	}
	mark := len(s.acts)
	s.mu.Unlock()
	t := time.NewTimer(probeCap)
	select {
	case <-s.activity:
	case <-t.C:
	}
	t.Stop()
	synctest.Wait()
	s.mu.Lock()
	acted := len(s.acts) > mark
	var first time.Time
	if acted {
		first = s.acts[mark]
	}
	s.mu.Unlock()
	held := s.takeEffects()
	if !acted {
		return nil
	}
	kind := "backoff"
	if polls && first.Equal(poll) {
		kind = "poll"
	} else if retry && first.Equal(retryAt) {
		kind = "handler-retry"
	}
	s.probed = &probe{timer: timerJSON{kind, ms(first.Sub(now))}, before: before, held: held}
	return &s.probed.timer
}

// fire fires the timer last reported. d is the harness's delay, used only when it was told of no
// timer (the fake clock then moves by d).
func (s *session) fire(d time.Duration) (held []effect) {
	if s.probed != nil {
		// The probe already moved time to this timer and ran what it set off.
		held = s.probed.held
		s.probed = nil
		return held
	}
	now := time.Now()
	until := now.Add(d)
	what := "no timer was reported"
	if s.timer != nil {
		until = s.timer.at
		what = fmt.Sprintf("the %s timer reported for +%gms", s.timer.kind, ms(until.Sub(now)))
	}
	s.sleepUntil(now, until, what)
	return nil
}

// advance moves the fake clock by d when time passes for client-go with no timer of its own firing:
// its transport finding a dead connection, a server keeping its request waiting. The harness does
// this only when no timer it was told of is due before then.
func (s *session) advance(d time.Duration) []effect {
	if s.probed != nil {
		// No connection is open as far as the harness knows: nothing can be waiting on one.
		return nil
	}
	now := time.Now()
	s.sleepUntil(now, now.Add(d), fmt.Sprintf("the end of %gms that passed with no timer due", ms(d)))
	return nil
}

// sleepUntil sleeps the root goroutine until `until` and settles; observable activity before then
// means a timer the harness was not told of fired, and halts the session.
func (s *session) sleepUntil(now, until time.Time, what string) {
	s.mu.Lock()
	mark := len(s.acts)
	s.mu.Unlock()
	time.Sleep(until.Sub(now))
	synctest.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.acts) > mark && s.acts[mark].Before(until) && s.halted == nil {
		reason := fmt.Sprintf("a timer the harness could not see fired after %gms, before %s",
			ms(s.acts[mark].Sub(now)), what)
		s.halted = &reason
	}
}

// reply settles the bubble and builds the reply to the command just applied.
func (s *session) reply(held []effect) replyJSON {
	synctest.Wait()
	s.mu.Lock()
	halted := s.halted
	s.mu.Unlock()
	if p := s.probed; p != nil {
		// A command other than fire after a probe: as far as the harness knows, time has not moved
		// and no connection is open, so the command reached nothing; the same timer is next.
		st := p.before
		st.read = []int{}
		timer := p.timer
		return replyJSON{
			Effects: []effect{}, RV: st.rv, Synced: st.synced, Ready: st.ready, Cache: st.cache,
			Timer: &timer, Unread: st.unread, EndUnread: st.endUnread, Read: st.read, Halted: halted,
			Queued: st.queued, Behind: st.behind, Holdable: false,
		}
	}
	effects := append(held, s.takeEffects()...)
	st := s.snapshot()
	timer := s.nextTimer(st)
	if effects == nil {
		effects = []effect{}
	}
	return replyJSON{
		Effects: effects, RV: st.rv, Synced: st.synced, Ready: st.ready, Cache: st.cache,
		Timer: timer, Unread: st.unread, EndUnread: st.endUnread, Read: st.read, Halted: halted,
		Queued: st.queued, Behind: st.behind, Holdable: s.fifo != nil && s.probed == nil,
	}
}

// apply applies one wire command. Called by the root goroutine.
func (s *session) apply(c command) []effect {
	switch c.Cmd {
	case "fire":
		return s.fire(time.Duration(c.Ms * float64(time.Millisecond)))
	case "advance":
		return s.advance(time.Duration(c.Ms * float64(time.Millisecond)))
	}
	if c.Cmd == "hold" || c.Cmd == "release" {
		// Checked by the server before the command reaches here: a session in mode "fifo", with a
		// request open (no probe).
		s.fifo.SetHeld(c.Cmd == "hold")
		return nil
	}
	if s.probed != nil {
		// No connection is open as far as the harness knows (see reply).
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.Cmd {
	case "respond":
		s.respond(c.Status, c.Body, c.RetryAfter)
	case "cut":
		s.cut(c.Status, c.Body, c.Length)
	case "open":
		s.open()
	case "line":
		s.line(c.Data)
	case "end":
		s.end()
	case "break":
		s.fail(errReset())
	case "refuse":
		s.fail(errRefused())
	}
	return nil
}

// startWaitersOn starts n goroutines that each call wait, a WaitForCacheSync of some kind that
// starts polling at once; each is ready once its call returns true.
func (s *session) startWaitersOn(n int, wait func() bool) {
	s.ready = make([]bool, n)
	s.waitStart = time.Now()
	for i := range n {
		s.waiting.Add(1)
		go func() {
			defer s.waiting.Done()
			if wait() {
				s.mu.Lock()
				s.ready[i] = true
				s.act()
				s.mu.Unlock()
			}
		}()
	}
}
