package listwatchtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// command is one line of the harness's input.
type command struct {
	Cmd         string  `json:"cmd"`
	Seed        uint64  `json:"seed"`
	Waiters     int     `json:"waiters"`
	PageSize    int     `json:"page_size"`
	TimeoutMs   uint64  `json:"timeout_ms"`
	ResyncMs    uint64  `json:"resync_ms"`
	Handlers    int     `json:"handlers"`
	Mode        string  `json:"mode"`
	Status      int     `json:"status"`
	Body        string  `json:"body"`
	RetryAfter  *uint64 `json:"retry_after"`
	Length      int64   `json:"length"`
	Transform   bool    `json:"transform"`
	PanicOnce   bool    `json:"panic_handler"`
	SlowHandler bool    `json:"slow_handler"`
	// WatchErrorHandler: Env.WatchErrorHandler.
	WatchErrorHandler bool    `json:"watch_error_handler"`
	Data              string  `json:"data"`
	Ms                float64 `json:"ms"`
	// Manager starts a manager session (RunManager) in place of a client's; Cluster is the
	// cluster a manager session's `sync` answers the first list of.
	Manager *managerStart `json:"manager"`
	Cluster int           `json:"cluster"`
}

func parse(line []byte) (command, error) {
	var c command
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("not a command: %v", err)
	}
	if d.More() {
		return c, errors.New("not a command: more than one JSON value on the line")
	}
	switch c.Cmd {
	case "start":
		if c.Waiters < 0 || c.PageSize < 0 {
			return c, errors.New("start: waiters and page_size must not be negative")
		}
	case "respond":
		if c.Status < 100 || c.Status > 599 {
			return c, fmt.Errorf("respond: status %d is not an HTTP status", c.Status)
		}
	case "cut":
		if c.Status < 100 || c.Status > 599 {
			return c, fmt.Errorf("cut: status %d is not an HTTP status", c.Status)
		}
		if c.Length <= int64(len(c.Body)) {
			return c, fmt.Errorf("cut: length %d does not exceed the %d bytes sent", c.Length, len(c.Body))
		}
	case "fire", "advance":
		if c.Ms < 0 {
			return c, fmt.Errorf("%s: ms %g is negative", c.Cmd, c.Ms)
		}
	case "sync":
		if c.Cluster < 0 {
			return c, fmt.Errorf("sync: cluster %d is negative", c.Cluster)
		}
	case "line", "open", "end", "break", "refuse", "stop", "hold", "release":
	default:
		return c, fmt.Errorf("unknown command %q", c.Cmd)
	}
	return c, nil
}

// output writes reply lines; after a fatal line nothing more goes out.
type output struct {
	mu   sync.Mutex
	w    io.Writer
	dead bool
}

func (o *output) line(v any) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(fmt.Sprintf("marshalling a reply: %v", err))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead {
		return
	}
	o.w.Write(b.Bytes())
}

// last writes v and nothing after it.
func (o *output) last(v any) {
	o.line(v)
	o.mu.Lock()
	o.dead = true
	o.mu.Unlock()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// server reads commands and runs sessions, one after another.
type server struct {
	in   *bufio.Reader
	out  *output
	dog  *watchdog
	exit func(int)
}

// fatal writes {"error": msg} and exits with code.
func (sv *server) fatal(code int, msg string) {
	sv.out.last(map[string]string{"error": oneLine(msg)})
	sv.exit(code)
}

// next reads the next command; stdin's end exits at once.
func (sv *server) next() command {
	line, err := sv.in.ReadBytes('\n')
	if len(bytes.TrimSpace(line)) == 0 && err != nil {
		if err == io.EOF {
			sv.exit(0)
		}
		sv.fatal(1, fmt.Sprintf("reading a command: %v", err))
	}
	c, perr := parse(line)
	if perr != nil {
		sv.fatal(2, perr.Error())
	}
	return c
}

// Clients picks the client a run starts by the mode its configuration names, or says why it cannot
// run that mode (listwatch then reports the error and stops).
type Clients func(mode string) (Client, error)

// Serve serves listwatch's client protocol on the process's stdin and stdout with the clients
// named by mode, until stdin ends; it then exits the process. listwatch runs a Go test binary that
// calls it (see [Run], which does) with `-test.run` selecting the one test: each seed is a run of
// one client, inside a testing/synctest bubble of that test. The process must also run with
// GOMAXPROCS=1 and GODEBUG=randautoseed=0,randseednop=0, as listwatch starts it.
func Serve(t *testing.T, clients Clients) {
	serveOn(t, served{clients: clients})
}

// served is what a process serves: clients by mode, or a manager (RunManager).
type served struct {
	clients Clients
	manager Manager
}

func serveOn(t *testing.T, what served) {
	serve(t, os.Stdin, os.Stdout, os.Exit, what)
}

// serve runs the protocol on in and out until in ends. exit is os.Exit in the program.
func serve(t *testing.T, in io.Reader, out io.Writer, exit func(int), what served) {
	setup()
	o := &output{w: out}
	sv := &server{in: bufio.NewReaderSize(in, 1<<16), out: o, exit: exit}
	sv.dog = &watchdog{limit: stuckLimit(), stallAfter: stallAfter(), out: o, exit: exit}
	addPanicHandler(func(r any) {
		if handlerPanics.expected.Load() {
			handlerPanics.seen.Add(1)
			return
		}
		o.last(map[string]string{"error": oneLine(fmt.Sprintf("panic in the client: %v", r))})
	})
	go sv.dog.run()
	for {
		c := sv.next()
		if c.Cmd != "start" {
			sv.fatal(2, fmt.Sprintf("%s: no session is running (start one first)", c.Cmd))
		}
		if (c.Manager != nil) != (what.manager != nil) {
			sv.fatal(2, "start: this test serves "+what.kind()+", and the session asks for "+map[bool]string{true: "a manager", false: "a client"}[c.Manager != nil])
		}
		if c.Manager != nil {
			sv.managerSession(t, c, what.manager)
			continue
		}
		client, err := what.clients(c.Mode)
		if err != nil {
			sv.fatal(2, "start: "+err.Error())
		}
		sv.session(t, c, client)
	}
}

var setupOnce sync.Once

// setup makes the process deterministic and keeps client-go's error handling off the real clock.
func setup() {
	setupOnce.Do(func() {
		runtime.GOMAXPROCS(1)
		// apimachinery's default handlers include a rudimentary backoff that compares the bubble's
		// fake clock with a real time taken at package init: inside a bubble it sleeps for decades.
		setErrorHandler()
	})
}

// seedRand seeds math/rand's global source (client-go's watch timeouts and backoff jitter draw from
// it) and checks that the seed took: since Go 1.24 rand.Seed does nothing unless
// GODEBUG=randseednop=0 (which this package's tests also set with a //go:debug line).
func seedRand(seed uint64) error {
	rand.Seed(int64(seed)) //nolint:staticcheck
	a := rand.Int63()
	rand.Seed(int64(seed)) //nolint:staticcheck
	if rand.Int63() != a {
		return errors.New("math/rand: rand.Seed has no effect; run with GODEBUG=randseednop=0")
	}
	rand.Seed(int64(seed)) //nolint:staticcheck
	return nil
}

// inBubble runs one session, run, in a bubble of its own with math/rand seeded by seed, from its
// start to its stop: a panic that escapes it, or a bubble that fails, ends the process.
func (sv *server) inBubble(t *testing.T, seed uint64, run func()) {
	sv.dog.begin("start")
	if err := seedRand(seed); err != nil {
		sv.fatal(1, err.Error())
	}
	synctest.Test(t, func(t *testing.T) {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(os.Stderr, "panic: %v\n", r)
				sv.fatal(1, fmt.Sprintf("panic: %v", r))
			}
		}()
		run()
	})
	if t.Failed() {
		sv.fatal(1, "the session's bubble failed (see stderr)")
	}
	sv.out.line(map[string]bool{"stopped": true})
	sv.dog.end()
}

// session runs one session of client in its own bubble, from its start to its stop.
func (sv *server) session(t *testing.T, start command, client Client) {
	sv.inBubble(t, start.Seed, func() {
		s := &session{}
		handlerPanics.expect(start.PanicOnce)
		defer handlerPanics.expect(false)
		if err := s.begin(start, client); err != nil {
			sv.fatal(1, fmt.Sprintf("start: %v", err))
		}
		sv.out.line(s.reply(nil))
		sv.dog.end()
		for {
			c := sv.next()
			sv.dog.begin(c.Cmd)
			switch c.Cmd {
			case "stop":
				s.shutdown()
				return
			case "start":
				sv.fatal(2, "start: a session is already running (stop it first)")
			case "hold", "release":
				if s.fifo == nil {
					sv.fatal(2, c.Cmd+": this session has no consumer to hold (its client called no env.Hold)")
				}
				if s.probed != nil {
					sv.fatal(2, c.Cmd+": no request is open (client-go is between requests, its next timer already probed)")
				}
				sv.out.line(s.reply(s.apply(c)))
				sv.dog.end()
			default:
				held := s.apply(c)
				sv.out.line(s.reply(held))
				sv.dog.end()
			}
		}
	})
}

func (w served) kind() string {
	if w.manager != nil {
		return "a manager (RunManager)"
	}
	return "a client (Run)"
}

// managerSession runs one manager session in its own bubble, from its start to its stop: after
// each command, once the bubble is still, it replies with the requests' traces.
func (sv *server) managerSession(t *testing.T, start command, m Manager) {
	sv.inBubble(t, start.Seed, func() {
		s := &managerSession{}
		sv.dog.explaining(s.explain)
		defer sv.dog.explaining(nil)
		if err := s.begin(*start.Manager, m); err != nil {
			sv.fatal(1, fmt.Sprintf("start: %v", err))
		}
		sv.replyManager(s, "start")
		for {
			c := sv.next()
			sv.dog.begin(c.Cmd)
			switch c.Cmd {
			case "stop":
				s.shutdown()
				return
			case "sync":
				if err := s.sync(c.Cluster); err != nil {
					sv.fatal(2, err.Error())
				}
			case "advance":
				time.Sleep(time.Duration(c.Ms * float64(time.Millisecond)))
			default:
				sv.fatal(2, c.Cmd+": a manager session takes sync, advance and stop")
			}
			sv.replyManager(s, c.Cmd)
		}
	})
}

// replyManager waits for the bubble to go still and replies with the session's state.
func (sv *server) replyManager(s *managerSession, cmd string) {
	synctest.Wait()
	r, err := s.reply()
	if err != nil {
		sv.fatal(1, cmd+": "+err.Error())
	}
	sv.out.line(r)
	sv.dog.end()
}
