package shim

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// heldQueue is a controller's DeltaFIFO whose consumer the harness can hold between two pops: a
// consumer that falls behind its reflector, as a slow handler with a backlog does on real threads
// (the reflector's next Replace takes the FIFO's lock between two pops while deltas still wait).
// With the consumer held, the reflector goes on pushing into the real DeltaFIFO; released, the
// consumer pops until the queue is empty again. The holding happens outside the FIFO's mutex, on a
// channel, which synctest sees.
//
// Recent DeltaFIFOs list nothing of what they hold, so the queue keeps the set of keys with deltas
// waiting beside it: each push adds its keys before it reaches the FIFO, each pop removes its key.
type heldQueue struct {
	*cache.DeltaFIFO
	known  cache.KeyListerGetter
	mu     sync.Mutex
	keys   map[string]bool
	held   bool
	closed bool
	// wake is signalled (never blocking) when something was pushed, the hold ends or the queue closes.
	wake chan struct{}
}

func newHeldQueue(known cache.KeyListerGetter) *heldQueue {
	return &heldQueue{
		DeltaFIFO: cache.NewDeltaFIFO(cache.MetaNamespaceKeyFunc, known),
		known:     known,
		keys:      map[string]bool{},
		wake:      make(chan struct{}, 1),
	}
}

func (q *heldQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// SetHeld holds or releases the consumer (listwatchtest.Queue).
func (q *heldQueue) SetHeld(held bool) {
	q.mu.Lock()
	q.held = held
	q.mu.Unlock()
	q.signal()
}

// queued is how many keys have deltas waiting for the consumer.
// Queued is how many keys have deltas waiting (listwatchtest.Queue).
func (q *heldQueue) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.keys)
}

func (q *heldQueue) push(keys ...string) {
	q.mu.Lock()
	for _, k := range keys {
		q.keys[k] = true
	}
	q.mu.Unlock()
}

func (q *heldQueue) popped(key string) {
	q.mu.Lock()
	delete(q.keys, key)
	q.mu.Unlock()
}

func key(obj interface{}) string {
	k, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return k
}

// The reflector's pushes: each wakes a consumer waiting for something to pop.

func (q *heldQueue) Add(obj interface{}) error {
	defer q.signal()
	q.push(key(obj))
	return q.DeltaFIFO.Add(obj)
}

func (q *heldQueue) Update(obj interface{}) error {
	defer q.signal()
	q.push(key(obj))
	return q.DeltaFIFO.Update(obj)
}

// Delete queues nothing for an object neither known nor queued, as the DeltaFIFO does.
func (q *heldQueue) Delete(obj interface{}) error {
	defer q.signal()
	k := key(obj)
	_, known, err := q.known.GetByKey(k)
	q.mu.Lock()
	queued := q.keys[k]
	q.mu.Unlock()
	if known || queued || err != nil {
		q.push(k)
	}
	return q.DeltaFIFO.Delete(obj)
}

// Replace queues the listed keys and a deletion for every known key the list lacks (and, from
// v0.26.4, for every queued one it lacks: those are in the set already).
func (q *heldQueue) Replace(list []interface{}, rv string) error {
	defer q.signal()
	keys := q.known.ListKeys()
	for _, obj := range list {
		keys = append(keys, key(obj))
	}
	q.push(keys...)
	return q.DeltaFIFO.Replace(list, rv)
}

func (q *heldQueue) Resync() error {
	defer q.signal()
	q.push(q.known.ListKeys()...)
	return q.DeltaFIFO.Resync()
}

func (q *heldQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.DeltaFIFO.Close()
	q.signal()
}

// Pop waits, outside the FIFO's mutex, until the consumer is not held and a delta waits (or the
// queue is closed), then pops as the DeltaFIFO does.
func (q *heldQueue) Pop(process cache.PopProcessFunc) (interface{}, error) {
	for {
		q.mu.Lock()
		held, closed, waiting := q.held, q.closed, len(q.keys) > 0
		q.mu.Unlock()
		// Closed, the DeltaFIFO pops what it still holds, then says it is closed.
		if closed || (!held && waiting) {
			return q.DeltaFIFO.Pop(process)
		}
		<-q.wake
	}
}

// fifoView is a controller made with cache.New and the indexer its consumer keeps.
type fifoView struct {
	cache.Controller
	indexer cache.Indexer
	queue   *heldQueue
}

func (v *fifoView) GetStore() cache.Store { return v.indexer }

// beginFifo builds, instead of a SharedIndexInformer, what cache.NewIndexerInformer builds: a
// controller (cache.New) over a DeltaFIFO whose known objects are an indexer, and a consumer that
// applies each popped delta to the indexer and calls the handler, as that informer's does. The
// DeltaFIFO and the reflector are client-go's; only the consumer is the program's, so that it can be
// held. With env.WatchErrorHandler, the controller's Config.WatchErrorHandler tells env.Told.
func runFifo(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	indexer := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	q := newHeldQueue(indexer)
	consume := func(obj interface{}) error {
		deltas := obj.(cache.Deltas)
		if len(deltas) > 0 {
			q.popped(key(deltas[0].Object))
		}
		for _, d := range deltas {
			if d.Type == cache.Deleted {
				if err := indexer.Delete(d.Object); err != nil {
					return err
				}
				env.Deleted(d.Object)
				continue
			}
			// Sync (a relist), Added, Updated: an update of what the indexer holds, or an add.
			old, exists, err := indexer.Get(d.Object)
			if err != nil {
				return err
			}
			if exists {
				if err := indexer.Update(d.Object); err != nil {
					return err
				}
				env.Updated(old, d.Object)
			} else {
				if err := indexer.Add(d.Object); err != nil {
					return err
				}
				env.Added(d.Object)
			}
		}
		return nil
	}
	cfg := &cache.Config{
		Queue:            q,
		ListerWatcher:    lw,
		ObjectType:       &corev1.ConfigMap{},
		FullResyncPeriod: resyncPeriod(env),
		Process:          processFunc(consume),
	}
	if env.WatchErrorHandler {
		if err := setControllerWatchErrorHandler(env, cfg); err != nil {
			return fmt.Errorf("setting the watch error handler: %w", err)
		}
	}
	ctrl := cache.New(cfg)
	v := &fifoView{Controller: ctrl, indexer: indexer, queue: q}
	env.Show(v)
	env.Hold(q)
	go ctrl.Run(env.Stop)
	env.StartWaiters(env.WaitForCacheSync(ctrl.HasSynced))
	return nil
}
