package main

import (
	"context"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// heldWatcher is the etcd client's Watcher with a gate on what it delivers: while held, the watch
// responses etcd sends (events and progress notifications alike) wait in order, so that the cacher's
// etcd watch falls behind etcd as a slow or partitioned watch does, and the watch cache lags; released,
// they flow on in order. Requests (Watch, RequestProgress) go to etcd as ever: only the answers wait.
// It can also end every watch open through it as etcd ends one that fell below the compacted
// revision (compact), which makes the cacher relist.
type heldWatcher struct {
	clientv3.Watcher

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed when released
	// kicks has a channel for each watch open through it, and its key: compact sends on those under
	// a prefix.
	kicks map[int]kick
	// watches counts the Watch calls so far.
	watches int
}

func newHeldWatcher(w clientv3.Watcher) *heldWatcher {
	return &heldWatcher{Watcher: w, release: make(chan struct{}), kicks: map[int]kick{}}
}

type kick struct {
	key string
	c   chan int64
}

// compact ends every watch open through it on a key under prefix with a response whose CompactRevision is rev, as etcd
// answers a watch that fell below the compacted revision (clientv3's WatchResponse.Err is then
// ErrCompacted), and closes its channel. It returns how many watches it ended and how many Watch
// calls came before: a later call is the cacher watching again, after its relist.
func (h *heldWatcher) compact(prefix string, rev int64) (ended, calls int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, k := range h.kicks {
		if strings.HasPrefix(k.key, prefix) {
			k.c <- rev // buffered, and sent once: compact deletes it
			delete(h.kicks, id)
			ended++
		}
	}
	return ended, h.watches
}

// calls is how many Watch calls came so far.
func (h *heldWatcher) calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watches
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
	kicked := make(chan int64, 1)
	h.mu.Lock()
	h.watches++
	id := h.watches
	h.kicks[id] = kick{key, kicked}
	h.mu.Unlock()
	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			delete(h.kicks, id)
			h.mu.Unlock()
		}()
		compacted := func(rev int64) {
			select {
			case out <- clientv3.WatchResponse{CompactRevision: rev}:
			case <-ctx.Done():
			}
		}
		for {
			var resp clientv3.WatchResponse
			select {
			case r, ok := <-in:
				if !ok {
					return
				}
				resp = r
			case rev := <-kicked:
				compacted(rev)
				return
			case <-ctx.Done():
				return
			}
			select {
			case <-h.gate():
			case rev := <-kicked:
				compacted(rev)
				return
			case <-ctx.Done():
				return
			}
			select {
			case out <- resp:
			case rev := <-kicked:
				compacted(rev)
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
