package listwatchtest

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Holdable returns h behind a gate that listwatch closes and opens (the simulator's slow-consumer
// fault, drawn once some code registered a gate): while it is closed, whatever goroutine calls h
// blocks before the call, as a handler does that waits on a slow remote call or a lock, and what the
// code has for h meanwhile waits in its own queue (a SharedIndexInformer keeps each handler's
// notifications in a buffer of that handler's). listwatch reads a notification held at the gate as
// a backlog, and judges the code once the gate has opened again. It registers the gate with
// [Env.Hold]: one per run, so call it for one handler.
func (e *Env) Holdable(h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandlerFuncs {
	g := &gate{}
	e.Hold(g)
	// A call held when the run stops must return, or its goroutine would outlive the bubble.
	e.OnStop(func() { g.SetHeld(false) })
	held := h
	if h.AddFunc != nil {
		held.AddFunc = func(obj interface{}) { g.pass(); h.AddFunc(obj) }
	}
	if h.UpdateFunc != nil {
		held.UpdateFunc = func(old, obj interface{}) { g.pass(); h.UpdateFunc(old, obj) }
	}
	if h.DeleteFunc != nil {
		held.DeleteFunc = func(obj interface{}) { g.pass(); h.DeleteFunc(obj) }
	}
	return held
}

// gate is a Queue whose backlog is the calls waiting at it. It waits on a channel, so that a
// goroutine held there is durably blocked and its bubble can go still.
type gate struct {
	mu      sync.Mutex
	open    chan struct{} // closed when the gate opens; nil while it is open
	waiting int
}

func (g *gate) SetHeld(held bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case held && g.open == nil:
		g.open = make(chan struct{})
	case !held && g.open != nil:
		close(g.open)
		g.open = nil
	}
}

func (g *gate) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// pass returns at once while the gate is open, else once it opens.
func (g *gate) pass() {
	g.mu.Lock()
	open := g.open
	if open == nil {
		g.mu.Unlock()
		return
	}
	g.waiting++
	g.mu.Unlock()
	<-open
	g.mu.Lock()
	g.waiting--
	g.mu.Unlock()
}
