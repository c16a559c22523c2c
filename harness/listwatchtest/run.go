package listwatchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveEnv names the test a process started by listwatch serves the protocol for.
const serveEnv = "LISTWATCH_GO_CLIENT"

// binaryEnv tells listwatch the package's test binary is built already (the one running Run).
const binaryEnv = "LISTWATCH_GO_TEST_BINARY"

// Campaign is what listwatch runs a client through: seeded worlds, each with its faults, then
// healing, every property judged after every step.
type Campaign struct {
	// Seeds is how many seeds, from FirstSeed (default 100).
	Seeds     int
	FirstSeed uint64
	// Steps is how many steps with faults each seed takes before it heals (default 200).
	Steps int
	// FaultKinds narrows the faults a seed may draw (`listwatch simulate --fault-kinds`: "500",
	// "disconnect", "410", ...); empty draws every kind, "none" none.
	FaultKinds []string
	// ServerFlaws switches on known bugs of the model API server that serves the code, by their
	// catalogue names (`listwatch simulate --flaw`; `listwatch check --help` lists them): a campaign
	// that asks what the code makes of a server with that bug, such as "partial-revision-served" (a
	// LIST that reads a lease revoke's revision in part). Only the API server's flaws: listwatch
	// refuses a reflector's, since the code under test is the reflector.
	ServerFlaws []string
	// Waiters is how many callers wait for the cache to sync ([Env.StartWaiters]; default 3).
	Waiters int
	// Timeout is the client's rest.Config.Timeout (default none, as client-go's).
	Timeout time.Duration
	// Resync is the resync period the campaign asks of the code ([Env.Resync]; default none), in
	// whole seconds.
	Resync time.Duration
	// Handlers is how many handlers the campaign asks of the code ([Env.Handlers]; default 1).
	Handlers int
	// SlowHandler asks the code for a first handler listwatch can hold ([Env.SlowHandler],
	// [Env.Holdable]), and draws the slow-consumer fault that holds it.
	SlowHandler bool
	// WatchErrorHandler says that the code tells its user of its failures through [Env.Told] (see
	// [Env.WatchErrorHandler]): failures-told then judges it; without it that property is not judged.
	WatchErrorHandler bool
	// Known names properties that something the code does not own is known to break (its client-go
	// release, say), each with why: Run logs their seeds and trace files and does not fail the test
	// for them. They are still judged, and every other property still fails it.
	Known map[string]string
	// Out is where shrunk failures are written: $LISTWATCH_OUT, or a directory under os.TempDir().
	Out string

	// Manager says the test registers a client manager ([RunManager], which sets it): each seed's
	// world then has one, and no other client.
	Manager bool
}

// Failure is one property a campaign found broken: its first seed, shrunk into a trace file that
// `listwatch show` prints and `listwatch replay` runs again.
type Failure struct {
	Property string `json:"breaks"`
	Seed     uint64 `json:"seed"`
	Detail   string `json:"detail"`
	Trace    string `json:"trace"`
	Steps    int    `json:"shrunk_steps"`
}

// Run runs client through the campaign and fails t for each property broken, naming the property,
// the seed and the trace file. It starts the listwatch binary ($LISTWATCH, or listwatch on PATH),
// which runs this test binary again, selecting this test, to serve the client: so Run must be
// called from the test function itself (t is the test listwatch selects), and the test must do
// nothing before it that it cannot do twice.
func Run(t *testing.T, client Client, c Campaign) {
	t.Helper()
	if os.Getenv(serveEnv) == t.Name() {
		Serve(t, func(mode string) (Client, error) {
			if mode != "" {
				return nil, fmt.Errorf("mode %q: the client of test %s has no modes", mode, t.Name())
			}
			return client, nil
		})
		return
	}
	failures, err := Simulate(t.Name(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.tell(t, failures)
}

// tell fails t with each property broken and logs each known one, at the line of t's test that
// called Run (or RunManager).
func (c Campaign) tell(t *testing.T, failures []Failure) {
	t.Helper()
	broken, known := c.report(failures)
	for _, m := range broken {
		t.Error(m)
	}
	for _, m := range known {
		t.Log(m)
	}
}

// report says each property broken, and apart each known one (Campaign.Known), once per property:
// its first seed, shrunk into a trace, with the seeds after it counted.
func (c Campaign) report(failures []Failure) (broken, known []string) {
	others := map[string][]uint64{}
	for _, f := range failures {
		if f.Trace == "" {
			others[f.Property] = append(others[f.Property], f.Seed)
		}
	}
	for _, f := range failures {
		if f.Trace == "" {
			continue
		}
		also := ""
		if n := len(others[f.Property]); n > 0 {
			also = fmt.Sprintf(" (and %d more seeds: %v)", n, others[f.Property])
		}
		to := &broken
		if why, ok := c.Known[f.Property]; ok {
			to = &known
			also += fmt.Sprintf(", known (%s)", why)
		}
		*to = append(*to, fmt.Sprintf("%s broken by seed %d%s: %s\n\ttrace (%d steps): %s\n\tlistwatch show %s\n\tlistwatch replay %s",
			f.Property, f.Seed, also, f.Detail, f.Steps, f.Trace, f.Trace, f.Trace))
	}
	return broken, known
}

// Simulate runs the campaign on the client of test (a test of this package's test binary that
// calls Run) and returns the properties it broke. Run calls it; a test that wants to assert on the
// failures itself may call it from another test.
func Simulate(test string, c Campaign) ([]Failure, error) {
	bin, err := listwatchBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("listwatchtest: the package directory: %v", err)
	}
	spec := c.clientSpec(dir, test)
	out := c.Out
	if out == "" {
		out = os.Getenv("LISTWATCH_OUT")
	}
	if out == "" {
		out = filepath.Join(os.TempDir(), "listwatch", strings.NewReplacer("/", "_", " ", "_").Replace(test))
	}
	seeds := c.Seeds
	if seeds <= 0 {
		seeds = 100
	}
	args := []string{"simulate", "--client", spec, "--seed", strconv.FormatUint(c.FirstSeed, 10),
		"--seeds", strconv.Itoa(seeds), "--out", out, "--json"}
	if c.Steps > 0 {
		args = append(args, "--steps", strconv.Itoa(c.Steps))
	}
	if len(c.FaultKinds) > 0 {
		args = append(args, "--fault-kinds", strings.Join(c.FaultKinds, ","))
	}
	for _, f := range c.ServerFlaws {
		args = append(args, "--flaw", f)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("listwatchtest: this test binary's path: %v", err)
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(), binaryEnv+"="+exe)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("listwatch %s: %v: %s", strings.Join(args, " "), runErr, lastLine(stderr.String()))
	}
	var result struct {
		Failures []Failure `json:"failures"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &result); err != nil {
		return nil, fmt.Errorf("listwatch %s: its output is not a result (%v): %s", strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return result.Failures, nil
}

// listwatchBinary is $LISTWATCH, or listwatch on PATH.
func listwatchBinary() (string, error) {
	if p := os.Getenv("LISTWATCH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("listwatchtest: LISTWATCH=%s: %v", p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("listwatch")
	if err != nil {
		return "", errors.New("listwatchtest: listwatch is not on PATH: install it with `cargo install --locked --path harness --features client-go` from its repository, or set LISTWATCH to its path")
	}
	return p, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// clientSpec is the `--client` that names test in the package at dir with the campaign's options.
func (c Campaign) clientSpec(dir, test string) string {
	spec := "go:" + dir + ",test=" + test
	if c.Manager {
		return spec + ",manager"
	}
	if c.Waiters > 0 {
		spec += ",waiters=" + strconv.Itoa(c.Waiters)
	}
	if c.Timeout > 0 {
		spec += fmt.Sprintf(",timeout=%ds", int(c.Timeout.Round(time.Second)/time.Second))
	}
	if c.Resync > 0 {
		spec += fmt.Sprintf(",resync=%ds", int(c.Resync.Round(time.Second)/time.Second))
	}
	if c.Handlers > 1 {
		spec += fmt.Sprintf(",handlers=%d", c.Handlers)
	}
	if c.SlowHandler {
		spec += ",slow-handler"
	}
	if c.WatchErrorHandler {
		spec += ",watch-error-handler"
	}
	return spec
}
