// Package rvresume is a small reflector written by hand over client-go's typed client, as code that
// keeps its own cache of ConfigMaps without an informer does: it lists, then watches from the RV
// it has seen, applies each event to its store and tells its handler, and after a watch ends it
// watches again, relisting only when the server says the RV is too old (410 Gone).
//
// [NewResumingFromList] builds the same reflector with a bug seen in hand-written watch loops: after
// a watch ends it watches again from the RV of its last LIST instead of the last event's, so the
// server replays events it has already applied: objects go back in time, deleted ones come back.
package rvresume

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Reflector keeps the ConfigMaps of one namespace in a store.
type Reflector struct {
	client         typedcorev1.ConfigMapInterface
	handler        cache.ResourceEventHandler
	resumeFromList bool

	store  cache.Store
	mu     sync.Mutex
	listRV string // the RV of the last LIST
	lastRV string // the RV of the last LIST or event applied
	synced bool
}

// New is a reflector that resumes each watch from the last RV it applied.
func New(client typedcorev1.ConfigMapInterface, handler cache.ResourceEventHandler) *Reflector {
	return &Reflector{client: client, handler: handler, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

// NewResumingFromList is the reflector with the bug: it resumes each watch from its last LIST's RV.
func NewResumingFromList(client typedcorev1.ConfigMapInterface, handler cache.ResourceEventHandler) *Reflector {
	r := New(client, handler)
	r.resumeFromList = true
	return r
}

// GetStore is the reflector's cache.
func (r *Reflector) GetStore() cache.Store { return r.store }

// LastSyncResourceVersion is the RV of what the store holds.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastRV
}

// HasSynced says whether the first LIST is in the store.
func (r *Reflector) HasSynced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.synced
}

// Run lists and watches until ctx is done. Failed requests are retried after a backoff that
// starts at 800 ms and doubles up to 30 s, reset once a watch delivers something.
func (r *Reflector) Run(ctx context.Context) {
	backoff := time.Duration(0)
	failed := func() bool {
		if backoff == 0 {
			backoff = 800 * time.Millisecond
		} else if backoff *= 2; backoff > 30*time.Second {
			backoff = 30 * time.Second
		}
		t := time.NewTimer(backoff)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	needList := true
	for ctx.Err() == nil {
		if needList {
			if err := r.list(ctx); err != nil {
				if !failed() {
					return
				}
				continue
			}
			needList = false
		}
		from := r.LastSyncResourceVersion()
		if r.resumeFromList {
			r.mu.Lock()
			from = r.listRV
			r.mu.Unlock()
		}
		w, err := r.client.Watch(ctx, metav1.ListOptions{ResourceVersion: from, AllowWatchBookmarks: true})
		if err != nil {
			needList = apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
			if !failed() {
				return
			}
			continue
		}
		progressed, errored, gone := r.consume(ctx, w)
		w.Stop()
		if progressed {
			backoff = 0
		}
		// A watch that ended in an ERROR event (410 among them: then a relist) waits out the
		// backoff before the next request, as one that ended with nothing to show for it does.
		needList = gone
		if (errored || !progressed) && !failed() {
			return
		}
	}
}

// list replaces the store with a LIST's items, telling the handler what changed.
func (r *Reflector) list(ctx context.Context) error {
	list, err := r.client.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range list.Items {
		cm := &list.Items[i]
		key, _ := cache.MetaNamespaceKeyFunc(cm)
		seen[key] = true
		r.put(cm)
	}
	for _, key := range r.store.ListKeys() {
		if !seen[key] {
			old, _, _ := r.store.GetByKey(key)
			_ = r.store.Delete(old)
			r.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: old})
		}
	}
	r.mu.Lock()
	r.listRV, r.lastRV, r.synced = list.ResourceVersion, list.ResourceVersion, true
	r.mu.Unlock()
	return nil
}

// put adds or updates cm in the store and tells the handler.
func (r *Reflector) put(cm *corev1.ConfigMap) {
	old, had, _ := r.store.Get(cm)
	_ = r.store.Update(cm)
	if had {
		r.handler.OnUpdate(old, cm)
	} else {
		r.handler.OnAdd(cm, false)
	}
}

// consume applies a watch's events until it ends. It says whether any event arrived, whether the
// watch ended in an ERROR event, and whether that said the RV is too old (a relist is then needed).
func (r *Reflector) consume(ctx context.Context, w watch.Interface) (progressed, errored, gone bool) {
	for {
		select {
		case <-ctx.Done():
			return progressed, false, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return progressed, false, false
			}
			if ev.Type == watch.Error {
				status := apierrors.FromObject(ev.Object)
				return progressed, true, apierrors.IsResourceExpired(status) || apierrors.IsGone(status)
			}
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			progressed = true
			switch ev.Type {
			case watch.Bookmark:
				// Only its RV is news.
			case watch.Added, watch.Modified:
				r.put(cm)
			case watch.Deleted:
				if old, had, _ := r.store.Get(cm); had {
					_ = r.store.Delete(old)
					r.handler.OnDelete(cm)
				}
			}
			r.mu.Lock()
			r.lastRV = cm.ResourceVersion
			r.mu.Unlock()
		}
	}
}
