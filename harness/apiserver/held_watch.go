package main

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// heldWatcher is the etcd client's Watcher with a gate on what it delivers: while held, the watch
// responses etcd sends (events and progress notifications alike) wait in order, so that the cacher's
// etcd watch falls behind etcd as a slow or partitioned watch does, and the watch cache lags; released,
// they flow on in order. Requests (Watch, RequestProgress) go to etcd as ever: only the answers wait.
type heldWatcher struct {
	clientv3.Watcher

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed when released
}

func newHeldWatcher(w clientv3.Watcher) *heldWatcher {
	return &heldWatcher{Watcher: w, release: make(chan struct{})}
}

// hold stops delivering watch responses until set(false).
func (h *heldWatcher) set(held bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case held && !h.held:
		h.release = make(chan struct{})
	case !held && h.held:
		close(h.release)
	}
	h.held = held
}

func (h *heldWatcher) isHeld() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// gate is closed while the watcher is released.
func (h *heldWatcher) gate() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held {
		return closed
	}
	return h.release
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (h *heldWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := h.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			select {
			case <-h.gate():
			case <-ctx.Done():
				return
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
