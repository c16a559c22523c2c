package listwatchtest

import (
	"context"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A Client starts the code under test and returns once it runs (its goroutines started), or an
// error if it cannot start. It runs once per seed, inside a testing/synctest bubble: its only way
// out is env.Config, its clock is the bubble's, and it must stop, and let its goroutines end, once
// env.Context is done. Through env it shows listwatch what is judged: its cache and the resource
// version it claims ([Env.Show]), its handlers' notifications ([Env.Handler] or [Env.Added] and
// friends), and its readiness ([Env.StartWaiters]).
type Client func(env *Env) error

// View is what listwatch reads of a client after each step: the resource version it claims (""
// for none), whether it says it has synced, and its cache. A cache.SharedIndexInformer is a View,
// as is a cache.Controller with its indexer (see [StoreView]).
type View interface {
	LastSyncResourceVersion() string
	HasSynced() bool
	GetStore() cache.Store
}

// Queue is a consumer's backlog that listwatch can hold (its consumer pops nothing while held) to
// play a slow handler, and whose length it reads. Optional: see [Env.Hold].
type Queue interface {
	SetHeld(held bool)
	Queued() int
}

// Env is one seed's world as the code under test sees it. Only the goroutine that called the
// Client may call its methods, except the notifications (Added, Updated, Deleted, DeletedUnknown,
// Handler), which any goroutine of the code may call.
type Env struct {
	// Config reaches the API server listwatch plays, over a transport of its own, in JSON. Build
	// clients on it as on any config: kubernetes.NewForConfig(env.Config).
	Config *rest.Config
	// Context is done when the seed's run stops; so is Stop closed.
	Context context.Context
	Stop    <-chan struct{}
	// Namespace is where the world's objects live (ConfigMaps in "default").
	Namespace string
	// Waiters is how many callers listwatch asks to wait for the cache to sync (see StartWaiters).
	Waiters int
	// Mode, PageSize, Transform, PanicOnce and SlowHandler are what the configuration asks of code that offers
	// choices (listwatch's own client-go configurations do); code that offers none ignores them.
	Mode      string
	PageSize  int
	Transform bool
	// PanicOnce asks for a handler that panics once, in a program where utilruntime.ReallyCrash is
	// false so that client-go recovers it. During such a run a panic that client-go recovers
	// (utilruntime.HandleCrash) is expected rather than an error of the client's.
	PanicOnce bool
	// Resync is the resync period the configuration asks for (`,resync=30s`; 0: none): code that
	// builds an informer passes it on (the resync period of cache.NewSharedIndexInformer, or of
	// AddEventHandlerWithResyncPeriod). With it set, an update whose old and new objects are the
	// same (a resync's, or a relist's of an unchanged object) may come at any time: listwatch takes
	// it with the step it came in, and needs no timer for it.
	Resync time.Duration
	// SlowHandler asks for a first handler that listwatch can hold (`,slow-handler`): code that
	// offers one wraps it with [Env.Holdable].
	SlowHandler bool
	// Handlers is how many handlers the configuration asks for (`,handlers=N`; 1 by default): code
	// that offers several gives the k-th (from 0) HandlerFor(k), and each is judged on its own.
	Handlers int
	// WatchErrorHandler asks the code to tell listwatch of the failures it hands its user
	// (`,watch-error-handler`): code that offers it gives its informer a watch error handler that
	// calls [Env.Told], and is then judged by failures-told.
	WatchErrorHandler bool

	s *session
}

// Show tells listwatch where to read the client's cache, RV and sync state. A Client must call it
// once before it returns.
func (e *Env) Show(v View) { e.s.view = v }

// StoreView is a View of a store of the code's own, with its claimed RV and sync state read by rv
// and synced (nil: "" and false).
func StoreView(store cache.Store, rv func() string, synced func() bool) View {
	return &storeView{store, rv, synced}
}

type storeView struct {
	store  cache.Store
	rv     func() string
	synced func() bool
}

func (v *storeView) LastSyncResourceVersion() string {
	if v.rv == nil {
		return ""
	}
	return v.rv()
}

func (v *storeView) HasSynced() bool { return v.synced != nil && v.synced() }

func (v *storeView) GetStore() cache.Store { return v.store }

// Handler is an event handler whose calls are the notifications listwatch judges: add it to the
// informer the code runs (informer.AddEventHandler(env.Handler())), or call it from the code's own.
// It is HandlerFor(0).
func (e *Env) Handler() cache.ResourceEventHandlerFuncs { return e.HandlerFor(0) }

// HandlerFor is the k-th handler (from 0) of code with several (see Handlers): its notifications
// are judged apart from the others', since an informer gives each handler its own queue.
func (e *Env) HandlerFor(k int) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { e.s.notify(k, "add", obj, nil) },
		UpdateFunc: func(old, obj interface{}) { e.s.notify(k, "update", obj, old) },
		DeleteFunc: func(obj interface{}) { e.deleted(k, obj) },
	}
}

// Told notifies listwatch that the code told its user of a failed attempt to list and watch, err:
// call it from the informer's watch error handler, as in
//
//	informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { env.Told(err) })
//
// (client-go v0.19 on). failures-told judges it: a failed LIST, or a WATCH refused other than with a
// 429 or a refused connection, must be told before the next request.
func (e *Env) Told(err error) { e.s.told(err) }

// Added notifies listwatch that the code's handler was told obj was added.
func (e *Env) Added(obj interface{}) { e.s.notify(0, "add", obj, nil) }

// Updated notifies listwatch that the code's handler was told old became obj.
func (e *Env) Updated(old, obj interface{}) { e.s.notify(0, "update", obj, old) }

// Deleted notifies listwatch that the code's handler was told obj was deleted; a
// cache.DeletedFinalStateUnknown is a delete whose final state is unknown.
func (e *Env) Deleted(obj interface{}) { e.deleted(0, obj) }

func (e *Env) deleted(k int, obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		e.s.notify(k, "delete-unknown", d.Obj, nil)
		return
	}
	e.s.notify(k, "delete", obj, nil)
}

// StartWaiters starts env.Waiters goroutines that each call wait, as a controller's workers call
// cache.WaitForCacheSync before they work; each caller is ready once its call returns true. wait
// must start polling at once, as WaitForCacheSync does (its 100 ms poll is the only timer
// listwatch knows of a waiter). Code that never calls it shows no readiness.
func (e *Env) StartWaiters(wait func() bool) { e.s.startWaitersOn(e.Waiters, wait) }

// WaitForCacheSync is the usual wait for StartWaiters: cache.WaitForCacheSync on synced until
// env.Stop closes.
func (e *Env) WaitForCacheSync(synced ...cache.InformerSynced) func() bool {
	return func() bool { return cache.WaitForCacheSync(e.Stop, synced...) }
}

// Go runs f on a goroutine of the code's that listwatch waits for when the run stops: f must
// return once env.Context is done.
func (e *Env) Go(f func()) {
	e.s.waiting.Add(1)
	go func() {
		defer e.s.waiting.Done()
		f()
	}()
}

// OnStop registers f to run when the run stops, after Context is done (for what does not stop with
// a context: a watch.Interface's Stop).
func (e *Env) OnStop(f func()) { e.s.closers = append(e.s.closers, f) }

// Hold lets listwatch hold q's consumer, a slow handler with a backlog.
func (e *Env) Hold(q Queue) { e.s.fifo = q }

// requestTimeout is the rest.Config.Timeout of a run (0: none).
func requestTimeout(ms uint64) time.Duration { return time.Duration(ms) * time.Millisecond }
