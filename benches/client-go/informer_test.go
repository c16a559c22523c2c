// Package clientgobench measures client-go's informer on the bytes listwatch's Rust benchmarks use:
// the ConfigMaps and Pods of benches/src/objects.rs, serialized as Kubernetes JSON by
// `cargo run -p listwatch-benches --bin wire_bytes` into target/bench-bytes/ (or $LISTWATCH_BENCH_BYTES).
//
// Every figure runs the real path: the generated informer (informers/core/v1), its typed client and
// REST client decoding the response bodies (the JSON serializer; watch.StreamWatcher for a watch), the
// reflector, the FIFO of this release's defaults (RealFIFO with atomic replace in v0.37), the indexer
// (namespace index, as the informer factory sets) and the shared processor calling a handler that
// only counts. Only the network is replaced: an http.RoundTripper answers from the files.
//
//   - BenchmarkApply: one op is the whole event stream (10k watch event lines) applied to an informer
//     that has listed the stream's 10k initial objects; events/s is reported.
//   - BenchmarkRelist: one op is a LIST of 10k or 100k ConfigMaps, every one at a newer RV, decoded and
//     replaced into a store that holds the older version of each: an informer is started with its
//     indexer already filled (not measured), so that its LIST is processed exactly as a relist is (the
//     FIFO's Replace, reconciled against the indexer), and the op ends when the handler has seen every
//     update. It includes starting the informer's goroutines and sending the request.
//     peak-heap-MiB is the most the Go heap's objects grew over their size before the op (sampled every
//     200 µs with runtime/metrics, after a GC), and peak-RSS-growth-MiB how far the kernel's peak of
//     the resident set (VmHWM, reset through /proc/self/clear_refs as the op starts) rose over the
//     resident set before it; both are the largest over the ops of one run, and the second means most
//     for the first op of a process (scripts/bench-client-go runs one op per process for it).
//   - BenchmarkReaderWait: the 100k relist again, with a goroutine calling indexer.GetByKey in a loop
//     (over 1,000 keys); the longest single call (the mean over the ops of each op's longest) and the
//     mean call.
//
// cores is the process's CPU time (every thread: the informer's goroutines, the garbage collector, and
// in BenchmarkReaderWait the reader) over the wall time of the ops: how many of the machine's cores the
// figure used.
package clientgobench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func TestMain(m *testing.M) {
	// v0.37 starts an informer with a streaming watch (WatchListClient) by default; these benchmarks
	// measure the LIST path, as the Rust benchmarks do.
	if err := os.Setenv("KUBE_FEATURE_WatchListClient", "false"); err != nil {
		panic(err)
	}
	// Stopping an informer fails its pending watch request ("context canceled"), which client-go logs.
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := flags.Set(name, value); err != nil {
			panic(err)
		}
	}
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// How long any wait for the informer may take before the benchmark fails.
const patience = 2 * time.Minute

// readerKeys is how many distinct keys the reader cycles through, as in the Rust benchmark.
const readerKeys = 1000

func bytesDir() string {
	if d := os.Getenv("LISTWATCH_BENCH_BYTES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "target", "bench-bytes")
}

func readBytes(b *testing.B, name string) []byte {
	data, err := os.ReadFile(filepath.Join(bytesDir(), name))
	if err != nil {
		b.Skipf("%v (write the bytes first: cargo run --release -p listwatch-benches --bin wire_bytes)", err)
	}
	return data
}

// server answers client-go's requests: every LIST with list, the first watch with events once gate is
// closed, every later watch never (it waits until the informer stops).
type server struct {
	list         []byte
	events       []byte
	gate         chan struct{}
	watchArrived chan struct{}
	watches      atomic.Int32
}

func newServer(list, events []byte) *server {
	return &server{list: list, events: events, gate: make(chan struct{}), watchArrived: make(chan struct{}, 1)}
}

func respond(req *http.Request, body []byte) *http.Response {
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

func (s *server) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if q.Get("sendInitialEvents") != "" {
		return nil, errors.New("unexpected streaming list: the WatchListClient gate should be off")
	}
	if q.Get("watch") == "" {
		return respond(req, s.list), nil
	}
	if s.watches.Add(1) == 1 && s.events != nil {
		s.watchArrived <- struct{}{}
		select {
		case <-s.gate:
			return respond(req, s.events), nil
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// informer is one SharedIndexInformer over a server, with a handler counting its calls.
type informer struct {
	inf    cache.SharedIndexInformer
	calls  atomic.Int64
	goal   atomic.Pointer[goal]
	cancel context.CancelFunc
	done   chan struct{}
}

// goal: reached is closed when the handler's call count reaches n.
type goal struct {
	n       int64
	reached chan struct{}
}

func newInformer(b *testing.B, kind string, s *server) *informer {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: s, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	i := &informer{done: make(chan struct{})}
	switch kind {
	case "configmaps":
		i.inf = coreinformers.NewConfigMapInformer(cs, metav1.NamespaceAll, 0, indexers)
	case "pods":
		i.inf = coreinformers.NewPodInformer(cs, metav1.NamespaceAll, 0, indexers)
	default:
		b.Fatalf("unknown kind %q", kind)
	}
	count := func() {
		c := i.calls.Add(1)
		if g := i.goal.Load(); g != nil && c == g.n {
			close(g.reached)
		}
	}
	_, err = i.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { count() },
		UpdateFunc: func(any, any) { count() },
		DeleteFunc: func(any) { count() },
	})
	if err != nil {
		b.Fatal(err)
	}
	return i
}

// expect sets the goal: the handler's total call count n (set before the calls can reach it).
func (i *informer) expect(n int64) {
	i.goal.Store(&goal{n: n, reached: make(chan struct{})})
}

func (i *informer) run() {
	ctx, cancel := context.WithCancel(context.Background())
	i.cancel = cancel
	go func() {
		i.inf.RunWithContext(ctx)
		close(i.done)
	}()
}

func (i *informer) wait(b *testing.B, what string) {
	g := i.goal.Load()
	select {
	case <-g.reached:
	case <-time.After(patience):
		b.Fatalf("%s: the handler saw %d calls, not %d", what, i.calls.Load(), g.n)
	}
}

func (i *informer) stop() {
	i.cancel()
	<-i.done
}

var kinds = []string{"configmaps", "pods"}

func BenchmarkApply(b *testing.B) {
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			list := readBytes(b, kind+".events-list.json")
			events := readBytes(b, kind+".events.jsonl")
			initial := int64(decodeList(b, list).Len())
			lines := int64(bytes.Count(events, []byte("\n")))
			b.SetBytes(int64(len(events)))
			var elapsed, cpu time.Duration
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				runtime.GC()
				s := newServer(list, events)
				i := newInformer(b, kind, s)
				i.expect(initial)
				i.run()
				i.wait(b, "the initial list")
				select {
				case <-s.watchArrived:
				case <-time.After(patience):
					b.Fatal("no watch request")
				}
				i.expect(initial + lines)
				b.StartTimer()
				start, startCPU := time.Now(), cpuTime(b)
				close(s.gate)
				i.wait(b, "the event stream")
				elapsed += time.Since(start)
				cpu += cpuTime(b) - startCPU
				b.StopTimer()
				i.stop()
			}
			b.ReportMetric(float64(lines*int64(b.N))/elapsed.Seconds(), "events/s")
			b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
		})
	}
}

// decodeList decodes a LIST body with client-go's own codec (for the content an indexer holds before
// a relist; not measured).
type lister interface{ Len() int }

type cmList struct{ *corev1.ConfigMapList }

func (l cmList) Len() int { return len(l.Items) }

type podList struct{ *corev1.PodList }

func (l podList) Len() int { return len(l.Items) }

func decodeList(b *testing.B, body []byte) lister {
	obj, _, err := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	switch l := obj.(type) {
	case *corev1.ConfigMapList:
		return cmList{l}
	case *corev1.PodList:
		return podList{l}
	}
	b.Fatalf("unexpected list %T", obj)
	return nil
}

func fill(b *testing.B, i *informer, held lister) {
	idx := i.inf.GetIndexer()
	var err error
	switch l := held.(type) {
	case cmList:
		for k := range l.Items {
			err = errors.Join(err, idx.Add(&l.Items[k]))
		}
	case podList:
		for k := range l.Items {
			err = errors.Join(err, idx.Add(&l.Items[k]))
		}
	}
	if err != nil {
		b.Fatal(err)
	}
}

// heapObjects is the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakSampler records the most heapObjects grows over base until stopped.
func peakSampler(base uint64) (stop func() uint64) {
	var peak uint64
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if h := heapObjects(); h > base && h-base > peak {
				peak = h - base
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		wg.Wait()
		if h := heapObjects(); h > base && h-base > peak {
			peak = h - base
		}
		return peak
	}
}

// cpuTime is the CPU time the process has used, user and system, on every thread.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// statusKiB is a field of /proc/self/status in KiB (VmRSS, VmHWM).
func statusKiB(b *testing.B, field string) uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kib
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS resets the kernel's peak of the resident set (VmHWM) to the resident set now, which it
// returns.
func resetPeakRSS(b *testing.B) uint64 {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatal(err)
	}
	return statusKiB(b, "VmRSS")
}

// reader calls GetByKey in a loop until stopped; the longest and the mean call.
func reader(idx cache.Indexer) (stop func() (time.Duration, time.Duration)) {
	keys := make([]string, readerKeys)
	for k := range keys {
		keys[k] = fmt.Sprintf("default/cm-%05d", k)
	}
	var quit atomic.Bool
	started := make(chan struct{})
	var longest, total time.Duration
	var calls int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		close(started)
		for k := 0; !quit.Load(); k++ {
			t := time.Now()
			_, ok, _ := idx.GetByKey(keys[k%readerKeys])
			d := time.Since(t)
			if !ok {
				panic("a key the store holds is missing")
			}
			longest = max(longest, d)
			total += d
			calls++
		}
	}()
	<-started
	return func() (time.Duration, time.Duration) {
		quit.Store(true)
		wg.Wait()
		return longest, total / time.Duration(max(calls, 1))
	}
}

var sizes = []struct {
	name string
	file string
}{{"10k", "list-10k"}, {"100k", "list-100k"}}

func relist(b *testing.B, size string, withReader bool) {
	before := readBytes(b, "configmaps."+size+".initial.json")
	after := readBytes(b, "configmaps."+size+".json")
	held := decodeList(b, before)
	n := int64(held.Len())
	var elapsed, cpu, longest, mean time.Duration
	var peak, peakRSS uint64
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		b.StopTimer()
		s := newServer(after, nil)
		i := newInformer(b, "configmaps", s)
		fill(b, i, held)
		i.expect(n)
		var stopReader func() (time.Duration, time.Duration)
		if withReader {
			stopReader = reader(i.inf.GetIndexer())
		}
		runtime.GC()
		stopSampler := peakSampler(heapObjects())
		baseRSS := resetPeakRSS(b)
		b.StartTimer()
		start, startCPU := time.Now(), cpuTime(b)
		i.run()
		i.wait(b, "the relist")
		elapsed += time.Since(start)
		cpu += cpuTime(b) - startCPU
		b.StopTimer()
		peak = max(peak, stopSampler())
		if hwm := statusKiB(b, "VmHWM"); hwm > baseRSS {
			peakRSS = max(peakRSS, hwm-baseRSS)
		}
		if withReader {
			l, m := stopReader()
			longest += l
			mean += m
		}
		i.stop()
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/1e6, "ms/relist")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakRSS)/1024, "peak-RSS-growth-MiB")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
	if withReader {
		b.ReportMetric(float64(longest.Nanoseconds())/float64(b.N)/1e3, "µs-longest-read")
		b.ReportMetric(float64(mean.Nanoseconds())/float64(b.N), "ns-mean-read")
	}
}

func BenchmarkRelist(b *testing.B) {
	for _, size := range sizes {
		b.Run("configmaps/"+size.name, func(b *testing.B) { relist(b, size.file, false) })
	}
}

func BenchmarkReaderWait(b *testing.B) {
	b.Run("configmaps/100k", func(b *testing.B) { relist(b, "list-100k", true) })
}
