package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// initialEventsEnd is the annotation of the bookmark that ends a streaming list's initial events
// (metav1.InitialEventsAnnotationKey).
const initialEventsEnd = "k8s.io/initial-events-end"

// kind is a resource as the driver writes it: where it is served and what its objects are.
type kind struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

type driver struct {
	client dynamic.Interface
	// rest is the same REST client as client's, for LISTs and WATCHes sent with no retries: client-go
	// retries a 429 or 5xx with Retry-After in the same call, and the run compares what the server
	// answered the first time.
	rest      rest.Interface
	resource  kind
	other     *kind
	etcd      *clientv3.Client
	etcdURL   string
	prefix    string
	fixedNS   string
	server    string
	run       int
	namespace string
	// createdNS: the run created its namespace (on a server that serves namespaces), and deletes it
	// when it ends.
	createdNS bool
	// The revision of the last write of the watched resource, which a barrier waits for.
	lastWatched int64
	// The keys a transaction deleted at lastWatched (E8). A watch cache applies a revision's events
	// one at a time and is at the revision from its first, so the barrier also waits until none of
	// them is listed.
	lastGone []int

	mu      sync.Mutex
	watches map[int]func()
}

func newDriver(f *flags) (*driver, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the client: %w", err)
	}
	restClient, err := rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(cfg), httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the client: %w", err)
	}
	client := dynamic.New(restClient)
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the discovery client: %w", err)
	}
	d := &driver{client: client, rest: restClient, etcdURL: f.etcd, prefix: f.etcdPrefix, fixedNS: f.namespace, watches: map[int]func(){}}
	v, err := disc.ServerVersion()
	switch {
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%s refused the credentials: GET /version: %w", cfg.Host, err)
	case err != nil:
		return nil, fmt.Errorf("%s does not answer as a Kubernetes API server: GET /version: %w", cfg.Host, err)
	case v.GitVersion == "":
		return nil, fmt.Errorf("%s does not answer as a Kubernetes API server: GET /version names no gitVersion", cfg.Host)
	}
	d.server = v.GitVersion
	if d.resource, err = find(disc, "--resource", f.resource); err != nil {
		return nil, err
	}
	if !d.resource.namespaced {
		return nil, fmt.Errorf("--resource %s is not namespaced", f.resource)
	}
	if f.other != "" {
		o, err := find(disc, "--other-resource", f.other)
		if err != nil {
			return nil, err
		}
		d.other = &o
	}
	if f.etcd != "" {
		if f.etcdPrefix == "" {
			return nil, errors.New("--etcd needs --etcd-prefix (where the resource's objects are stored)")
		}
		d.etcd, err = clientv3.New(clientv3.Config{Endpoints: []string{f.etcd}, DialTimeout: 10 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("--etcd %s: %w", f.etcd, err)
		}
	}
	return d, nil
}

// find reads a resource from the server's discovery: its kind, and whether it is namespaced.
func find(disc discovery.DiscoveryInterface, flagName, s string) (kind, error) {
	gvr, err := parseResource(flagName, s)
	if err != nil {
		return kind{}, err
	}
	gv := gvr.GroupVersion().String()
	list, err := disc.ServerResourcesForGroupVersion(gv)
	if err != nil {
		return kind{}, fmt.Errorf("%s %s: the server does not serve %s: %w", flagName, s, gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name != gvr.Resource {
			continue
		}
		return kind{gvr: gvr, kind: r.Kind, namespaced: r.Namespaced}, nil
	}
	return kind{}, fmt.Errorf("%s %s: %s serves no resource %q", flagName, s, gv, gvr.Resource)
}

func (d *driver) stop() {
	d.stopWatches()
	d.cleanUp()
	if d.etcd != nil {
		_ = d.etcd.Close()
	}
}

func (d *driver) stopWatches() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, stop := range d.watches {
		stop()
		delete(d.watches, id)
	}
}

func (d *driver) objects(k kind) dynamic.ResourceInterface {
	if !k.namespaced {
		return d.client.Resource(k.gvr)
	}
	return d.client.Resource(k.gvr).Namespace(d.namespace)
}

// path is where the watched resource's collection is served in the sequence's namespace.
func (d *driver) path() []string {
	gvr := d.resource.gvr
	segments := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		segments = []string{"api", gvr.Version}
	}
	return append(segments, "namespaces", d.namespace, gvr.Resource)
}

// parameterCodec encodes ListOptions as query parameters, as the dynamic client's does.
var parameterCodec = func() runtime.ParameterCodec {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	return runtime.NewParameterCodec(s)
}()

func name(key int) string { return fmt.Sprintf("k%02d", key) }

func keyOf(n string) int {
	if len(n) < 2 {
		return -1
	}
	k, err := strconv.Atoi(n[1:])
	if err != nil {
		return -1
	}
	return k
}

// integerRV refuses a server whose resourceVersions are not integers. The contract lets a server
// make its own (clients treat them as opaque), but a run compares them with the model's, which are
// etcd's revisions, and could only report every answer as a difference.
func integerRV(s string) error {
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return fmt.Errorf("its resourceVersions are not integers (%q): a run compares them with etcd's revisions, so it cannot judge this server", s)
	}
	return nil
}

func rvOf(s string) int64 {
	rv, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return rv
}

// view reads what is compared of an object.
func view(o *unstructured.Unstructured) object {
	v, _ := strconv.Atoi(o.GetLabels()["version"])
	return object{Key: keyOf(o.GetName()), UID: string(o.GetUID()), RV: rvOf(o.GetResourceVersion()), Version: v}
}

// failure is an answer holding the server's error: the code and reason of its Status.
func failure(err error) answer {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		return answer{Error: &apiErr{Code: st.Code, Reason: string(st.Reason), Message: st.Message}}
	}
	return answer{Error: &apiErr{Code: 0, Reason: "ClientError", Message: err.Error()}}
}

func (d *driver) handle(ctx context.Context, req *request) answer {
	if req.Op != "start" && d.namespace == "" {
		return failure(fmt.Errorf("%s before start", req.Op))
	}
	switch req.Op {
	case "start":
		return d.start(ctx)
	case "put":
		return d.put(ctx, d.resource, req.Key)
	case "other":
		if d.other == nil {
			return failure(errors.New("a write of another resource, but no --other-resource"))
		}
		return d.put(ctx, *d.other, req.Key)
	case "delete":
		return d.delete(ctx, req.Key)
	case "delete_all":
		return d.deleteAll(ctx, req.Keys)
	case "compact":
		return d.compact(ctx, req.Rev)
	case "list":
		if req.Named {
			return d.listNamed(ctx, req)
		}
		return d.list(ctx, req.RV, req.Match, req.Limit, req.Cont)
	case "watch":
		return d.watch(req)
	case "stop":
		d.mu.Lock()
		stop, ok := d.watches[req.Watch]
		delete(d.watches, req.Watch)
		d.mu.Unlock()
		if ok {
			stop()
		}
		return answer{Closed: ok}
	case "sync":
		return d.sync(ctx)
	case "hold", "release":
		return failure(errors.New("a server over HTTP has no cache listwatch can hold back"))
	default:
		return failure(fmt.Errorf("unknown op %q", req.Op))
	}
}

// start begins a sequence in the run's namespace, emptied of the objects an earlier sequence wrote,
// and answers the revision it begins at: a consistent LIST's.
func (d *driver) start(ctx context.Context) answer {
	d.stopWatches()
	d.run++
	d.lastWatched, d.lastGone = 0, nil
	if d.namespace == "" {
		if err := d.makeNamespace(ctx); err != nil {
			return failure(err)
		}
	}
	if err := d.empty(ctx, d.resource); err != nil {
		return failure(err)
	}
	if err := d.mark(ctx); err != nil {
		return failure(err)
	}
	base := d.list(ctx, "", "", 0, "")
	if base.Error != nil {
		return base
	}
	a := d.sync(ctx)
	if a.Error != nil {
		return a
	}
	a.Rev, a.Server = base.Rev, d.server
	if d.etcd != nil {
		status, err := d.etcd.Status(ctx, d.etcdURL)
		if err != nil {
			return failure(fmt.Errorf("etcd at %s does not answer: %w", d.etcdURL, err))
		}
		a.Version = status.Version
	}
	return a
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// makeNamespace picks the run's namespace: --namespace, or one of its own, created where the server
// serves namespaces (a server that does not, such as an aggregated API server, takes any name).
func (d *driver) makeNamespace(ctx context.Context) error {
	if d.fixedNS != "" {
		d.namespace = d.fixedNS
		return nil
	}
	d.namespace = fmt.Sprintf("listwatch-%d-%s", os.Getpid(), randomSuffix())
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(d.namespace)
	_, err := d.client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{})
	switch {
	case err == nil:
		d.createdNS = true
	case apierrors.IsNotFound(err):
	default:
		return fmt.Errorf("creating namespace %s (or pass --namespace): %w", d.namespace, err)
	}
	return nil
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cleanUp leaves the server as the run found it: the sequence's objects deleted, and the namespace
// too if the run created it.
func (d *driver) cleanUp() {
	if d.namespace == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.empty(ctx, append([]kind{d.resource}, others(d.other)...)...); err != nil {
		fmt.Fprintf(os.Stderr, "rest: cleaning up: %v\n", err)
	}
	if d.createdNS {
		if err := d.client.Resource(namespaces).Delete(ctx, d.namespace, metav1.DeleteOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "rest: deleting namespace %s: %v\n", d.namespace, err)
		}
	}
}

// mark writes and deletes an object of the watched resource, so that etcd's last write before the
// sequence is one the watch cache sees: the cache then reaches the revision the sequence begins at
// (as a cache started for the sequence would be), whatever an earlier sequence wrote last (another
// resource's object moves etcd's revision but not that cache's, and without progress requests, E7,
// nothing else would move it).
func (d *driver) mark(ctx context.Context) error {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(d.resource.gvr.GroupVersion().String())
	o.SetKind(d.resource.kind)
	o.SetName("listwatch-start")
	o.SetNamespace(d.namespace)
	objects := d.objects(d.resource)
	written, err := objects.Create(ctx, o, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("writing the start mark: %w", err)
	}
	if err == nil {
		if err := integerRV(written.GetResourceVersion()); err != nil {
			return err
		}
	}
	if err := objects.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting the start mark: %w", err)
	}
	a := d.currentRev(ctx)
	if a.Error != nil {
		return fmt.Errorf("the revision after the start mark: %s", a.Error.Message)
	}
	d.lastWatched, d.lastGone = a.Rev, nil
	return nil
}

// empty deletes the objects named like a sequence's from the namespace.
func (d *driver) empty(ctx context.Context, kinds ...kind) error {
	for _, k := range kinds {
		list, err := d.objects(k).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s in %s to empty it: %w", k.gvr.Resource, d.namespace, err)
		}
		for _, o := range list.Items {
			if keyOf(o.GetName()) < 0 {
				continue
			}
			err := d.objects(k).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s/%s: %w", k.gvr.Resource, o.GetName(), err)
			}
		}
	}
	return nil
}

func others(k *kind) []kind {
	if k == nil {
		return nil
	}
	return []kind{*k}
}

// put creates the object or updates it, with a label counting its versions.
func (d *driver) put(ctx context.Context, k kind, key int) answer {
	objects := d.objects(k)
	current, err := objects.Get(ctx, name(key), metav1.GetOptions{})
	var written *unstructured.Unstructured
	switch {
	case apierrors.IsNotFound(err):
		o := &unstructured.Unstructured{}
		o.SetAPIVersion(k.gvr.GroupVersion().String())
		o.SetKind(k.kind)
		o.SetName(name(key))
		if k.namespaced {
			o.SetNamespace(d.namespace)
		}
		o.SetLabels(map[string]string{"version": "1"})
		written, err = objects.Create(ctx, o, metav1.CreateOptions{})
	case err != nil:
	default:
		labels := current.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		v, _ := strconv.Atoi(labels["version"])
		labels["version"] = strconv.Itoa(v + 1)
		current.SetLabels(labels)
		written, err = objects.Update(ctx, current, metav1.UpdateOptions{})
	}
	if err != nil {
		return failure(err)
	}
	o := view(written)
	if k == d.resource {
		d.lastWatched, d.lastGone = o.RV, nil
	}
	return answer{Rev: o.RV, Object: &o}
}

// delete deletes the object and answers the revision etcd is at after it (the dynamic client's
// Delete returns no object).
func (d *driver) delete(ctx context.Context, key int) answer {
	err := d.objects(d.resource).Delete(ctx, name(key), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return d.currentRev(ctx)
	}
	if err != nil {
		return failure(err)
	}
	a := d.currentRev(ctx)
	if a.Error == nil {
		a.Keys = []int{key}
		d.lastWatched, d.lastGone = a.Rev, nil
	}
	return a
}

// currentRev is the revision etcd is at: from etcd when the run reaches it, else a consistent LIST's.
func (d *driver) currentRev(ctx context.Context) answer {
	if d.etcd != nil {
		resp, err := d.etcd.Get(ctx, d.prefix+"/none")
		if err != nil {
			return failure(fmt.Errorf("etcd get: %w", err))
		}
		return answer{Rev: resp.Header.Revision}
	}
	a := d.list(ctx, "", "", 0, "")
	return answer{Rev: a.Rev, Error: a.Error}
}

func (d *driver) etcdKey(key int) string { return d.prefix + "/" + d.namespace + "/" + name(key) }

// deleteAll deletes several objects in one etcd transaction, at one revision, as a lease revoke does.
func (d *driver) deleteAll(ctx context.Context, keys []int) answer {
	if d.etcd == nil {
		return failure(errors.New("a multi-key delete, but no --etcd"))
	}
	ops := make([]clientv3.Op, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, clientv3.OpDelete(d.etcdKey(k)))
	}
	resp, err := d.etcd.Txn(ctx).Then(ops...).Commit()
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
		d.lastWatched, d.lastGone = resp.Header.Revision, deleted
	}
	return answer{Rev: resp.Header.Revision, Keys: deleted}
}

func (d *driver) compact(ctx context.Context, rev int64) answer {
	if d.etcd == nil {
		return failure(errors.New("a compaction, but no --etcd"))
	}
	_, err := d.etcd.Compact(ctx, rev, clientv3.WithCompactPhysical())
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return answer{Refused: "compacted"}
	case errors.Is(err, rpctypes.ErrFutureRev):
		return answer{Refused: "future-revision"}
	case err != nil:
		return failure(err)
	}
	return answer{Rev: rev}
}

func (d *driver) list(ctx context.Context, rv, match string, limit int64, cont string) answer {
	opts := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatch(match),
		Limit: limit, Continue: cont}
	return d.listAt(ctx, d.path(), opts)
}

// listNamed lists one name by field selector, in the run's namespace or across namespaces (the
// resource's path with no namespace).
func (d *driver) listNamed(ctx context.Context, req *request) answer {
	opts := metav1.ListOptions{ResourceVersion: req.RV, ResourceVersionMatch: metav1.ResourceVersionMatch(req.Match),
		FieldSelector: "metadata.name=" + name(req.Key)}
	path := d.path()
	if !req.Namespaced {
		path = append(path[:len(path)-3:len(path)-3], path[len(path)-1])
	}
	return d.listAt(ctx, path, opts)
}

func (d *driver) listAt(ctx context.Context, path []string, opts metav1.ListOptions) answer {
	list := &unstructured.UnstructuredList{}
	err := d.rest.Get().AbsPath(path...).SpecificallyVersionedParams(&opts, parameterCodec, metav1.SchemeGroupVersion).
		MaxRetries(0).Do(ctx).Into(list)
	if err != nil {
		return failure(err)
	}
	items := make([]object, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, view(&list.Items[i]))
	}
	return answer{Rev: rvOf(list.GetResourceVersion()), Items: items, Cont: list.GetContinue()}
}

func (d *driver) watch(req *request) answer {
	d.mu.Lock()
	if stop, ok := d.watches[req.Watch]; ok {
		stop()
		delete(d.watches, req.Watch)
	}
	d.mu.Unlock()
	opts := metav1.ListOptions{Watch: true, ResourceVersion: req.RV,
		ResourceVersionMatch: metav1.ResourceVersionMatch(req.Match), AllowWatchBookmarks: req.Marks}
	if req.Initial {
		t := true
		opts.SendInitialEvents = &t
	}
	if req.Timeout > 0 {
		opts.TimeoutSeconds = &req.Timeout
	}
	// The watch outlives this request: its own context, ended by stop (or by the server, at its
	// timeoutSeconds).
	ctx, cancel := context.WithCancel(context.Background())
	w, err := d.rest.Get().AbsPath(d.path()...).SpecificallyVersionedParams(&opts, parameterCodec, metav1.SchemeGroupVersion).
		MaxRetries(0).Watch(ctx)
	if err != nil {
		cancel()
		return failure(err)
	}
	d.mu.Lock()
	d.watches[req.Watch] = func() { w.Stop(); cancel() }
	d.mu.Unlock()
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

func message(id int, ev watch.Event) answer {
	a := answer{Watch: &id, Event: string(ev.Type)}
	switch ev.Type {
	case watch.Error:
		a.Error = failure(apierrors.FromObject(ev.Object)).Error
	case watch.Bookmark:
		if o, ok := ev.Object.(*unstructured.Unstructured); ok {
			a.Rev = rvOf(o.GetResourceVersion())
			a.Initial = o.GetAnnotations()[initialEventsEnd] == "true"
		}
	default:
		if o, ok := ev.Object.(*unstructured.Unstructured); ok {
			v := view(o)
			a.Object = &v
		}
	}
	return a
}

// sync is the barrier after a step: a consistent LIST (which a watch cache serves once it has etcd's
// revision), then LISTs at "0" (what the cache has) until the cache holds the whole of the last write
// of the watched resource (holdsWhole). It answers the revision the cache is at.
func (d *driver) sync(ctx context.Context) answer {
	if a := d.list(ctx, "", "", 0, ""); a.Error != nil {
		return a
	}
	for {
		a := d.list(ctx, "0", "", 0, "")
		if a.Error != nil {
			return a
		}
		if d.holdsWhole(a) {
			return answer{CacheRev: a.Rev}
		}
		select {
		case <-ctx.Done():
			return failure(fmt.Errorf("the cache did not reach revision %d (at %d)", d.lastWatched, a.Rev))
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// holdsWhole says whether a LIST at "0" holds the whole of the last write: past its revision, or at it
// with none of the keys its transaction deleted (E8). A LIST a watch cache serves between two events
// of one revision gets that revision's RV and only part of it.
func (d *driver) holdsWhole(list answer) bool {
	if list.Rev != d.lastWatched {
		return list.Rev > d.lastWatched
	}
	for _, gone := range d.lastGone {
		for _, o := range list.Items {
			if o.Key == gone {
				return false
			}
		}
	}
	return true
}
