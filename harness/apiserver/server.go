package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

const resourcePrefix = "/pods/"

// initialEventsEnd is the annotation of A12's bookmark (metav1.InitialEventsAnnotationKey from v0.30;
// v0.29 writes the same string, pkg/storage/util.go).
const initialEventsEnd = "k8s.io/initial-events-end"

var (
	codec       = codecs.LegacyCodec(examplev1.SchemeGroupVersion)
	newFunc     = func() runtime.Object { return &example.Pod{} }
	newListFunc = func() runtime.Object { return &example.PodList{} }
	gr          = schema.GroupResource{Resource: "pods"}
)

// cacherConfig is the cacher's configuration for the store: the fields every release has, and the
// fields that differ from release to release (cache_config*.go).
func cacherConfig(store storage.Interface) cacher.Config {
	c := cacher.Config{
		Storage:        store,
		Versioner:      versioner,
		ResourcePrefix: resourcePrefix,
		// The key the registry gives an object (`/pods/<namespace>/<name>`, as storageKey), which the
		// cacher looks one key up by (a LIST of one name in a namespace). Written out, since
		// storage.NamespaceKeyFunc puts a "/" after the prefix until v0.35 and not from then on.
		KeyFunc: func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return resourcePrefix + m.GetNamespace() + "/" + m.GetName(), nil
		},
		GetAttrsFunc: storage.DefaultNamespaceScopedAttr,
		NewFunc:      newFunc,
		NewListFunc:  newListFunc,
		Codec:        codec,
	}
	releaseConfig(&c)
	return c
}

// stack is one release's storage stack for the resource, built by that release's constructors
// (store_*.go and cache_*.go, chosen by build tags): the etcd3 store under the cacher, as the API
// server's registry wraps it.
type stack struct {
	// store is what requests go through: from v0.33 the cache delegator over the cacher and the etcd3
	// store (StorageWithCacher's wrapping); before, the cacher itself, which delegated to the store.
	store storage.Interface
	// wait returns once the cache is ready.
	wait func(context.Context) error
	// compacted tells the store's compactor (v0.34 on) of a compaction at once; nil before v0.34,
	// whose store learns of it from etcd's answers.
	compacted func(rev int64)
	stop      func()
}

// compaction is the etcd3 store's compactor (v0.34 on; zero before, whose store learns of
// compactions from etcd's answers).
type compaction struct {
	compacted func(rev int64)
	stop      func()
}

func (c compaction) close() {
	if c.stop != nil {
		c.stop()
	}
}

type server struct {
	client *etcdConn
	// held gates the etcd client's watch responses (the cacher's etcd watch): "hold", "release".
	held    *heldWatcher
	version string
	run     int
	prefix  string
	stack   *stack
	// The revision of the last write under the watched prefix, which a barrier waits for.
	lastWatched int64
	// The keys a transaction deleted at lastWatched (E8). The cache applies a revision's events one
	// at a time and is at the revision from its first (watchCache.processEvent), so the barrier also
	// waits until none of them is cached.
	lastGone    []int
	incarnation int

	mu      sync.Mutex
	watches map[int]watch.Interface
}

func newServer(endpoint string) (*server, error) {
	client, err := dial(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", endpoint, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, err := client.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("etcd at %s does not answer: %w", endpoint, err)
	}
	held := newHeldWatcher(client.Client.Watcher)
	client.Client.Watcher = held
	return &server{client: client, held: held, version: status.Version, watches: map[int]watch.Interface{}}, nil
}

func (s *server) stop() {
	s.stopWatches()
	if s.stack != nil {
		s.stack.stop()
		s.stack = nil
	}
	_ = s.client.Close()
}

func (s *server) stopWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, w := range s.watches {
		w.Stop()
		delete(s.watches, id)
	}
}

// start builds a fresh etcd3 store and cacher under a new prefix and waits until the cache is ready.
func (s *server) start(ctx context.Context) answer {
	s.stopWatches()
	if s.stack != nil {
		s.stack.stop()
		s.stack = nil
	}
	s.held.set(false)
	s.run++
	s.prefix = fmt.Sprintf("/listwatch/%d/%d", os.Getpid(), s.run)
	s.lastWatched, s.lastGone = 0, nil
	st, err := newStack(s.client, s.prefix)
	if err != nil {
		return failure(err)
	}
	s.stack = st
	if err := st.wait(ctx); err != nil {
		return failure(fmt.Errorf("the cache did not become ready: %w", err))
	}
	rev, err := s.currentRev(ctx)
	if err != nil {
		return failure(err)
	}
	// The base: the cache listed at the revision etcd had, nothing under the new prefix yet.
	cacheRev, err := s.cacheRev(ctx)
	if err != nil {
		return failure(err)
	}
	return answer{Rev: rev, CacheRev: cacheRev, Version: s.version}
}

func (s *server) currentRev(ctx context.Context) (int64, error) {
	resp, err := s.client.Client.Get(ctx, s.prefix+"/none")
	if err != nil {
		return 0, fmt.Errorf("etcd get: %w", err)
	}
	return resp.Header.Revision, nil
}

func (s *server) etcdKey(key int) string {
	return fmt.Sprintf("%s%sdefault/%s", s.prefix, resourcePrefix, name(key))
}

func name(key int) string { return fmt.Sprintf("k%02d", key) }

func keyOf(n string) int {
	k, err := strconv.Atoi(n[1:])
	if err != nil {
		return -1
	}
	return k
}

func storageKey(key int) string { return resourcePrefix + "default/" + name(key) }

// pod reads what is compared of an object; a watch may carry the cacher's caching wrapper of it.
func pod(obj runtime.Object) object {
	p, err := meta.Accessor(obj)
	if err != nil {
		return object{Key: -1}
	}
	rv, _ := strconv.ParseInt(p.GetResourceVersion(), 10, 64)
	v, _ := strconv.Atoi(p.GetLabels()["version"])
	return object{Key: keyOf(p.GetName()), UID: string(p.GetUID()), RV: rv, Version: v}
}

// failure is an answer holding an API error: its HTTP code and reason, as the API server would send.
func failure(err error) answer {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		st := status.Status()
		return answer{Error: &apiErr{Code: st.Code, Reason: string(st.Reason), Message: st.Message}}
	case storage.IsTooLargeResourceVersion(err):
		return answer{Error: &apiErr{Code: 504, Reason: "Timeout", Message: err.Error()}}
	default:
		return answer{Error: &apiErr{Code: 500, Reason: "InternalError", Message: err.Error()}}
	}
}

func (s *server) handle(ctx context.Context, req *request) answer {
	if req.Op != "start" && s.stack == nil {
		return failure(fmt.Errorf("%s before start", req.Op))
	}
	switch req.Op {
	case "start":
		return s.start(ctx)
	case "put":
		return s.put(ctx, req.Key)
	case "other":
		resp, err := s.client.Client.Put(ctx, fmt.Sprintf("%s/other/%d", s.prefix, req.Key), "other")
		if err != nil {
			return failure(err)
		}
		return answer{Rev: resp.Header.Revision}
	case "delete":
		return s.delete(ctx, req.Key)
	case "delete_all":
		return s.deleteAll(ctx, req.Keys)
	case "compact":
		return s.compact(ctx, req.Rev)
	case "list":
		return s.list(ctx, req)
	case "watch":
		return s.watch(ctx, req)
	case "stop":
		s.mu.Lock()
		w, ok := s.watches[req.Watch]
		delete(s.watches, req.Watch)
		s.mu.Unlock()
		if ok {
			w.Stop()
		}
		return answer{Closed: ok}
	case "sync":
		return s.sync(ctx)
	case "hold":
		// The cache falls behind from here: its etcd watch delivers nothing until "release".
		s.held.set(true)
		return answer{}
	case "release":
		s.held.set(false)
		return answer{}
	case "relist":
		return s.relist(ctx)
	case "minute":
		// A minute passes on the cacher's clock: its heartbeats (A8) go to the watches then due.
		if err := cacherClock.minute(ctx); err != nil {
			return failure(err)
		}
		return answer{}
	default:
		return failure(fmt.Errorf("unknown op %q", req.Op))
	}
}

// put creates the object or updates it (one etcd transaction, E1), with a label counting its versions.
func (s *server) put(ctx context.Context, key int) answer {
	out := &example.Pod{}
	err := s.stack.store.GuaranteedUpdate(ctx, storageKey(key), out, true, nil,
		func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			p := input.(*example.Pod).DeepCopy()
			if p.ResourceVersion == "" {
				s.incarnation++
				p = &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name(key), Namespace: "default",
					UID: types.UID("u" + strconv.Itoa(s.incarnation)), Labels: map[string]string{"version": "1"}}}
				return p, nil, nil
			}
			v, _ := strconv.Atoi(p.Labels["version"])
			p.Labels["version"] = strconv.Itoa(v + 1)
			return p, nil, nil
		}, nil)
	if err != nil {
		return failure(err)
	}
	o := pod(out)
	s.lastWatched, s.lastGone = o.RV, nil
	return answer{Rev: o.RV, Object: &o}
}

func (s *server) delete(ctx context.Context, key int) answer {
	out := &example.Pod{}
	err := deleteObject(ctx, s.stack.store, storageKey(key), out)
	if storage.IsNotFound(err) {
		rev, err := s.currentRev(ctx)
		if err != nil {
			return failure(err)
		}
		return answer{Rev: rev}
	}
	if err != nil {
		return failure(err)
	}
	rev, err := s.currentRev(ctx)
	if err != nil {
		return failure(err)
	}
	s.lastWatched, s.lastGone = rev, nil
	// The object Delete answers is what a client's DELETE gets back: its content before the delete,
	// with the RV the release stamps on it (A6; ApiServerRelease::deleted_object).
	o := pod(out)
	return answer{Rev: rev, Keys: []int{key}, Object: &o}
}

// deleteAll deletes several keys in one etcd transaction, at one revision, as a lease revoke does (E8).
func (s *server) deleteAll(ctx context.Context, keys []int) answer {
	ops := make([]clientv3.Op, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, clientv3.OpDelete(s.etcdKey(k)))
	}
	resp, err := s.client.Client.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return failure(err)
	}
	deleted := []int{}
	for i, r := range resp.Responses {
		if r.GetResponseDeleteRange().GetDeleted() > 0 {
			deleted = append(deleted, keys[i])
		}
	}
	if len(deleted) > 0 {
		s.lastWatched, s.lastGone = resp.Header.Revision, deleted
	}
	return answer{Rev: resp.Header.Revision, Keys: deleted}
}

// compact compacts etcd through its client and tells the store's compactor at once (the API server's
// own compactor learns it from the compact key a second later).
func (s *server) compact(ctx context.Context, rev int64) answer {
	_, err := s.client.Client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return answer{Refused: "compacted"}
	case errors.Is(err, rpctypes.ErrFutureRev):
		return answer{Refused: "future-revision"}
	case err != nil:
		return failure(err)
	}
	if s.stack.compacted != nil {
		s.stack.compacted(rev)
	}
	return answer{Rev: rev}
}

func predicate(limit int64, cont string, bookmarks bool) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(),
		GetAttrs: storage.DefaultNamespaceScopedAttr, Limit: limit, Continue: cont, AllowWatchBookmarks: bookmarks}
}

func (s *server) list(ctx context.Context, req *request) answer {
	list := &example.PodList{}
	opts := storage.ListOptions{ResourceVersion: req.RV, ResourceVersionMatch: metav1.ResourceVersionMatch(req.Match),
		Predicate: predicate(req.Limit, req.Cont, false)}
	if req.Named {
		opts.Predicate.Field = fields.OneTermEqualSelector("metadata.name", name(req.Key))
	}
	var err error
	if req.Named && req.Namespaced {
		// As the registry lists one name in a namespace (Store.ListPredicate): its one key. Across
		// namespaces it lists the whole resource with the selector.
		err = listOne(ctx, s.stack.store, storageKey(req.Key), opts, list)
	} else {
		err = listAll(ctx, s.stack.store, opts, list)
	}
	if err != nil {
		return failure(err)
	}
	rv, _ := strconv.ParseInt(list.ResourceVersion, 10, 64)
	items := make([]object, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, pod(&list.Items[i]))
	}
	return answer{Rev: rv, Items: items, Cont: list.Continue}
}

func (s *server) watch(ctx context.Context, req *request) answer {
	s.mu.Lock()
	if old, ok := s.watches[req.Watch]; ok {
		old.Stop()
		delete(s.watches, req.Watch)
	}
	s.mu.Unlock()
	opts := storage.ListOptions{ResourceVersion: req.RV, ResourceVersionMatch: metav1.ResourceVersionMatch(req.Match),
		Predicate: predicate(0, "", req.Marks)}
	if req.Initial {
		sendInitialEvents(&opts)
	}
	// The watch outlives this request: its own context, ended by stop. With a timeout, as the API
	// server's handler serves it (handleWatch and WatchServer.HandleHTTP, endpoints/handlers/get.go and
	// watch.go): the storage's watch gets a context with that deadline, and is stopped when it passes.
	var wctx context.Context
	var cancel context.CancelFunc
	if req.Timeout > 0 {
		wctx, cancel = context.WithTimeout(context.Background(), time.Duration(req.Timeout)*time.Second)
	} else {
		wctx, cancel = context.WithCancel(context.Background())
	}
	started, err := watchAll(wctx, s.stack.store, opts)
	if err != nil {
		cancel()
		return failure(err)
	}
	go func() {
		<-wctx.Done()
		started.Stop()
	}()
	w := stopping{started, cancel}
	s.mu.Lock()
	s.watches[req.Watch] = w
	s.mu.Unlock()
	id := req.Watch
	// Its messages may overtake the answer on stdout: the Rust side files them by watch id.
	go func() {
		for ev := range w.ResultChan() {
			send(message(id, ev))
		}
		send(answer{Watch: &id, Closed: true})
	}()
	return answer{}
}

// stopping is a watch whose Stop also ends its context.
type stopping struct {
	watch.Interface
	cancel context.CancelFunc
}

func (s stopping) Stop() {
	s.Interface.Stop()
	s.cancel()
}

func message(id int, ev watch.Event) answer {
	a := answer{Watch: &id, Event: string(ev.Type)}
	switch ev.Type {
	case watch.Bookmark:
		if p, err := meta.Accessor(ev.Object); err == nil {
			a.Rev, _ = strconv.ParseInt(p.GetResourceVersion(), 10, 64)
			a.Initial = p.GetAnnotations()[initialEventsEnd] == "true"
		}
	case watch.Error:
		if st, ok := ev.Object.(*metav1.Status); ok {
			a.Error = &apiErr{Code: st.Code, Reason: string(st.Reason), Message: st.Message}
		} else {
			a.Error = &apiErr{Code: 500, Reason: "InternalError", Message: fmt.Sprintf("%T", ev.Object)}
		}
	default:
		o := pod(ev.Object)
		a.Object = &o
	}
	return a
}

// cacheRev is the revision the cache serves a list at "0" from.
func (s *server) cacheRev(ctx context.Context) (int64, error) {
	rev, _, err := s.cacheList(ctx)
	return rev, err
}

// cacheList is a list at "0", served from the cache: its revision and the keys it holds.
func (s *server) cacheList(ctx context.Context) (int64, map[int]bool, error) {
	list := &example.PodList{}
	opts := storage.ListOptions{ResourceVersion: "0", Predicate: predicate(0, "", false)}
	if err := listAll(ctx, s.stack.store, opts, list); err != nil {
		return 0, nil, err
	}
	rev, err := strconv.ParseInt(list.ResourceVersion, 10, 64)
	keys := make(map[int]bool, len(list.Items))
	for i := range list.Items {
		keys[keyOf(list.Items[i].Name)] = true
	}
	return rev, keys, err
}

// holdsWhole says whether a cache at rev with keys holds the whole of the last write: past its
// revision, or at it with none of the keys its transaction deleted (E8). A LIST served from a cache
// between two events of one revision gets that revision's RV and only part of it.
func (s *server) holdsWhole(rev int64, keys map[int]bool) bool {
	if rev != s.lastWatched {
		return rev > s.lastWatched
	}
	for _, k := range s.lastGone {
		if keys[k] {
			return false
		}
	}
	return true
}

// relist makes the cacher relist (A5): its etcd watch ends as one that fell below the compacted
// revision does, the etcd3 watcher sends the cacher's reflector a 410 and its ListAndWatch returns;
// a second later (Cacher's wait.Until) startCaching closes every watch the cacher serves
// (terminateAllWatchers), lists etcd again, becomes ready (its watch cache's Replace) and watches
// from the list's revision. relist answers once that new watch came and the cache is ready.
func (s *server) relist(ctx context.Context) answer {
	rev, err := s.currentRev(ctx)
	if err != nil {
		return failure(err)
	}
	ended, calls := s.held.compact(s.prefix, rev)
	if ended == 0 {
		return failure(errors.New("relist: the cacher has no etcd watch open"))
	}
	for s.held.calls() == calls {
		select {
		case <-ctx.Done():
			return failure(errors.New("relist: the cacher did not watch etcd again"))
		case <-time.After(2 * time.Millisecond):
		}
	}
	if err := s.stack.wait(ctx); err != nil {
		return failure(fmt.Errorf("relist: the cache did not become ready again: %w", err))
	}
	return answer{}
}

// sync is the barrier after a step: a consistent LIST (which, served from the cache, first waits until
// the cache has etcd's current revision), then until the cache holds the whole of the last write of
// the watched prefix (holdsWhole). It answers the revision the cache is at.
func (s *server) sync(ctx context.Context) answer {
	if s.held.isHeld() {
		// Held behind on purpose: nothing to wait for, the cache stays where it is.
		rev, err := s.cacheRev(ctx)
		if err != nil {
			return failure(err)
		}
		return answer{CacheRev: rev}
	}
	list := &example.PodList{}
	opts := storage.ListOptions{ResourceVersion: "", Predicate: predicate(0, "", false)}
	if err := listAll(ctx, s.stack.store, opts, list); err != nil {
		return failure(err)
	}
	for {
		rev, keys, err := s.cacheList(ctx)
		if err != nil {
			return failure(err)
		}
		if s.holdsWhole(rev, keys) {
			return answer{CacheRev: rev}
		}
		select {
		case <-ctx.Done():
			return failure(fmt.Errorf("the cache did not reach revision %d (at %d)", s.lastWatched, rev))
		case <-time.After(2 * time.Millisecond):
		}
	}
}
