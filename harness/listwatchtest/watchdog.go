package listwatchtest

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

// watchdog watches each command on the real clock, outside every bubble. A bubble goes still only
// when all its goroutines are durably blocked, and two things keep one from ever going still: a
// goroutine that never blocks (a busy loop, such as reading a closed channel in a loop) and one
// blocked where synctest cannot see (a sync.Mutex). When a command has taken stallAfter and the
// same goroutines of the bubble stall it at two looks apart, the watchdog reports them as what the
// client did, `{"spinning": ...}` or `{"blocked": ...}`, and the process exits 3: its bubble can
// never go on. Anything else still unanswered after limit is `{"stuck": ...}`, exit 3.
type watchdog struct {
	mu         sync.Mutex
	gen        uint64
	busy       bool
	what       string
	limit      time.Duration
	stallAfter time.Duration
	out        *output
	exit       func(int)
	// explain, when set, says more of a stall on locks than the goroutines' frames: a manager
	// session names the requests that wait and those that hold the locks.
	// The line then also carries, as "state", what explain returns second: the session's reply.
	explain func(stall) (string, any)
}

// explaining sets (or, with nil, clears) how a stall on locks is explained.
func (w *watchdog) explaining(f func(stall) (string, any)) {
	w.mu.Lock()
	w.explain = f
	w.mu.Unlock()
}

func (w *watchdog) begin(what string) {
	w.mu.Lock()
	w.gen++
	w.busy, w.what = true, what
	w.mu.Unlock()
}

func (w *watchdog) end() {
	w.mu.Lock()
	w.busy = false
	w.mu.Unlock()
}

func (w *watchdog) run() {
	var seen uint64
	var since time.Time
	var first *stall // the stall seen at the first look of this command
	tick := w.limit / 50
	if t := w.stallAfter / 4; t > 0 && t < tick {
		tick = t
	}
	for {
		time.Sleep(tick)
		w.mu.Lock()
		busy, gen, what, explain := w.busy, w.gen, w.what, w.explain
		w.mu.Unlock()
		now := time.Now()
		if !busy || gen != seen {
			seen, since, first = gen, now, nil
			continue
		}
		if w.stallAfter > 0 && now.Sub(since) >= w.stallAfter {
			st := stalled(allStacks())
			switch {
			case st.empty():
				first = nil
			case first == nil:
				first = &st
			case first.same(st) && now.Sub(since) >= 2*w.stallAfter:
				key, text := st.report()
				if key == "blocked" && explain != nil {
					why, state := explain(st)
					w.out.last(map[string]any{key: oneLine(fmt.Sprintf("%s: blocked on a lock synctest cannot see: %s", what, why)), "state": state})
					w.exit(3)
					return
				}
				w.out.last(map[string]string{key: oneLine(fmt.Sprintf("%s: %s", what, text))})
				w.exit(3)
				return
			}
		}
		if now.Sub(since) < w.limit {
			continue
		}
		w.out.last(map[string]string{"stuck": fmt.Sprintf(
			"%s: no reply after %v of real time (a goroutine blocked where synctest cannot see it, e.g. on a mutex)",
			what, w.limit)})
		fmt.Fprintf(os.Stderr, "listwatchtest: stuck in %s; goroutines:\n%s\n", what, allStacks())
		w.exit(3)
		return
	}
}

// allStacks is every goroutine's stack, as runtime.Stack dumps them: a buffer grown until it fits.
func allStacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stall is what keeps a bubble from going still: its goroutines that run (or wait to) and those
// blocked on a lock, each as "goroutine N (state) in FUNC at FILE:LINE".
type stall struct {
	spinning   []string
	blocked    []string
	blockedIDs []string // the blocked goroutines' numbers, as blocked
	ids        []string // the goroutines', in order: the same stall at two looks has the same ones
	// frames are every goroutine's of the bubble, by number, durably blocked or not: where a
	// goroutine that holds the lock the others wait for is.
	frames map[string][]string
}

func (s stall) empty() bool { return len(s.spinning) == 0 && len(s.blocked) == 0 }

// same: the same goroutines stall the bubble (a busy loop's line moves between two looks).
func (s stall) same(o stall) bool {
	return len(s.spinning) == len(o.spinning) && strings.Join(s.ids, " ") == strings.Join(o.ids, " ")
}

// report names a busy loop first: a goroutine that never blocks is the cause, whatever waits on it.
func (s stall) report() (key, text string) {
	if len(s.spinning) > 0 {
		return "spinning", "a busy loop: " + strings.Join(s.spinning, "; ")
	}
	return "blocked", "blocked on a lock synctest cannot see: " + strings.Join(s.blocked, "; ")
}

var goroutineHeader = regexp.MustCompile(`^goroutine (\d+) \[([^\]]*)\]:$`)

// stalled reads runtime.Stack's dump: the goroutines of a synctest bubble that are not durably
// blocked, runnable or running (a busy loop) or waiting on a sync lock.
func stalled(stacks string) stall {
	var st stall
	for _, block := range strings.Split(stacks, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		m := goroutineHeader.FindStringSubmatch(lines[0])
		if m == nil || !strings.Contains(m[2], "synctest bubble") {
			continue
		}
		if st.frames == nil {
			st.frames = map[string][]string{}
		}
		st.frames[m[1]] = lines[1:]
		if strings.Contains(m[2], "(durable)") {
			continue
		}
		state := strings.TrimSpace(strings.Split(m[2], ",")[0])
		where := "goroutine " + m[1] + " (" + state + ") in " + userFrame(lines[1:])
		switch {
		case state == "running" || state == "runnable":
			st.spinning = append(st.spinning, where)
			st.ids = append(st.ids, m[1])
		case strings.HasPrefix(state, "sync.") || strings.HasPrefix(state, "semacquire"):
			st.blocked = append(st.blocked, where)
			st.blockedIDs = append(st.blockedIDs, m[1])
			st.ids = append(st.ids, m[1])
		}
	}
	return st
}

// userFrame is the first frame outside the runtime and the standard sync packages (sync and
// sync/atomic: a busy loop preempted in an inlined atomic load has it on top), as
// "pkg.FUNC at FILE:LINE" (the package's name and the file's base name).
func userFrame(frames []string) string {
	if f := frameOutside(frames, "runtime.", "internal/", "sync.", "sync/"); f != "" {
		return f
	}
	return "an unknown function"
}

// ownFrame is the first frame of the code under test: outside the standard library's runtime,
// sync, time and context, client-go and apimachinery, and this package ("" if none is).
func ownFrame(frames []string) string {
	return frameOutside(frames, "runtime.", "internal/", "sync.", "sync/", "time.", "context.", "k8s.io/", "sigs.k8s.io/", "listwatch.dev/listwatchtest.", "created by ")
}

func frameOutside(frames []string, prefixes ...string) string {
	for i := 0; i+1 < len(frames); i += 2 {
		fn := frames[i]
		skip := false
		for _, p := range prefixes {
			skip = skip || strings.HasPrefix(fn, p)
		}
		if skip {
			continue
		}
		if j := strings.LastIndex(fn, "("); j > 0 {
			fn = fn[:j]
		}
		fn = fn[strings.LastIndex(fn, "/")+1:] // the package's name, not its path
		file := strings.TrimSpace(frames[i+1])
		if j := strings.Index(file, " +0x"); j > 0 {
			file = file[:j]
		}
		if j := strings.LastIndex(file, "/"); j >= 0 {
			file = file[j+1:]
		}
		return fn + " at " + file
	}
	return ""
}

// stuckLimit is 10 s of real time, or LISTWATCH_SHIM_STUCK_MS.
func stuckLimit() time.Duration { return envMillis("LISTWATCH_SHIM_STUCK_MS", 10*time.Second) }

// stallAfter is how long a command runs before the watchdog looks for a busy loop or a lock:
// 150 ms of real time (it looks twice, that far apart: a step of client code takes well under a
// millisecond), or LISTWATCH_STALL_MS.
func stallAfter() time.Duration { return envMillis("LISTWATCH_STALL_MS", 150*time.Millisecond) }

func envMillis(name string, otherwise time.Duration) time.Duration {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return otherwise
}
