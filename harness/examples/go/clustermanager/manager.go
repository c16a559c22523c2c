// Package clustermanager serves callers from the ConfigMap caches of many clusters: one informer
// factory per cluster, created on the cluster's first request, as a multi-cluster controller or a
// virtual-cluster syncer keeps them.
//
// [Manager.GetHoldingLock] is the manager as it first shipped: it waits for a new cluster's cache to
// sync while it still holds the write lock, with nothing to end the wait but the manager's own stop
// channel. While one cluster is unreachable, that wait never ends, and every other request, for
// every cluster, waits for the lock behind it. [Manager.Get] is the fix: the lock only guards the
// map, and the wait runs outside it, bounded by the request's context. [Manager.GetWaitingUnbounded]
// is half the fix: the wait is outside the lock, but still on the manager's stop channel, so a
// request for an unreachable cluster never returns (every other request is served).
package clustermanager

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Trace is told of each lock a request takes and each wait it enters, when set: tests use it to see
// who holds what while waiting for what. Any field may be nil.
type Trace struct {
	Locked   func(ctx context.Context, write bool)
	Unlocked func(ctx context.Context)
	Waiting  func(ctx context.Context, cluster string, stop <-chan struct{})
	Waited   func(ctx context.Context)
}

// Manager keeps one ConfigMap cache per cluster.
type Manager struct {
	configFor func(cluster string) (*rest.Config, error)
	namespace string
	stop      <-chan struct{}
	Trace     Trace

	mu       sync.RWMutex
	clusters map[string]*clusterCache
}

type clusterCache struct {
	lister corelisters.ConfigMapLister
	synced cache.InformerSynced
}

// New is a manager whose caches watch ConfigMaps in namespace of the clusters configFor reaches, and
// run until stop closes.
func New(configFor func(cluster string) (*rest.Config, error), namespace string, stop <-chan struct{}) *Manager {
	return &Manager{configFor: configFor, namespace: namespace, stop: stop, clusters: map[string]*clusterCache{}}
}

// Get returns cluster's ConfigMap lister once its cache has synced, or an error when ctx ends
// first. The write lock is held only to add a new cluster's cache.
func (m *Manager) Get(ctx context.Context, cluster string) (corelisters.ConfigMapLister, error) {
	c, err := m.lookup(ctx, cluster)
	if err != nil {
		return nil, err
	}
	m.waiting(ctx, cluster, ctx.Done())
	defer m.waited(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return nil, fmt.Errorf("cluster %s: cache not synced: %w", cluster, ctx.Err())
	}
	return c.lister, nil
}

// lookup finds cluster's cache, or creates and starts it under the write lock.
func (m *Manager) lookup(ctx context.Context, cluster string) (*clusterCache, error) {
	m.rlock(ctx)
	c, ok := m.clusters[cluster]
	m.runlock(ctx)
	if ok {
		return c, nil
	}
	m.lock(ctx)
	defer m.unlock(ctx)
	if c, ok := m.clusters[cluster]; ok {
		return c, nil
	}
	c, err := m.start(cluster)
	if err != nil {
		return nil, err
	}
	m.clusters[cluster] = c
	return c, nil
}

// GetWaitingUnbounded is Get with the wait on the manager's stop channel rather than the request's
// context: outside the lock, but with no bound.
func (m *Manager) GetWaitingUnbounded(ctx context.Context, cluster string) (corelisters.ConfigMapLister, error) {
	c, err := m.lookup(ctx, cluster)
	if err != nil {
		return nil, err
	}
	m.waiting(ctx, cluster, m.stop)
	defer m.waited(ctx)
	if !cache.WaitForCacheSync(m.stop, c.synced) {
		return nil, fmt.Errorf("cluster %s: manager stopped", cluster)
	}
	return c.lister, nil
}

// GetHoldingLock is Get as the manager first shipped it: a new cluster's cache is waited for under
// the write lock, until it syncs or the manager stops.
func (m *Manager) GetHoldingLock(ctx context.Context, cluster string) (corelisters.ConfigMapLister, error) {
	m.rlock(ctx)
	c, ok := m.clusters[cluster]
	m.runlock(ctx)
	if ok {
		return c.lister, nil
	}
	m.lock(ctx)
	defer m.unlock(ctx)
	if c, ok := m.clusters[cluster]; ok {
		return c.lister, nil
	}
	c, err := m.start(cluster)
	if err != nil {
		return nil, err
	}
	m.waiting(ctx, cluster, m.stop)
	synced := cache.WaitForCacheSync(m.stop, c.synced)
	m.waited(ctx)
	if !synced {
		return nil, fmt.Errorf("cluster %s: manager stopped", cluster)
	}
	m.clusters[cluster] = c
	return c.lister, nil
}

// start builds cluster's clientset and informer factory and starts its ConfigMap informer.
func (m *Manager) start(cluster string) (*clusterCache, error) {
	config, err := m.configFor(cluster)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(m.namespace))
	configMaps := factory.Core().V1().ConfigMaps()
	informer := configMaps.Informer()
	factory.Start(m.stop)
	return &clusterCache{lister: configMaps.Lister(), synced: informer.HasSynced}, nil
}

func (m *Manager) rlock(ctx context.Context) {
	m.mu.RLock()
	if m.Trace.Locked != nil {
		m.Trace.Locked(ctx, false)
	}
}

func (m *Manager) runlock(ctx context.Context) {
	if m.Trace.Unlocked != nil {
		m.Trace.Unlocked(ctx)
	}
	m.mu.RUnlock()
}

func (m *Manager) lock(ctx context.Context) {
	m.mu.Lock()
	if m.Trace.Locked != nil {
		m.Trace.Locked(ctx, true)
	}
}

func (m *Manager) unlock(ctx context.Context) {
	if m.Trace.Unlocked != nil {
		m.Trace.Unlocked(ctx)
	}
	m.mu.Unlock()
}

func (m *Manager) waiting(ctx context.Context, cluster string, stop <-chan struct{}) {
	if m.Trace.Waiting != nil {
		m.Trace.Waiting(ctx, cluster, stop)
	}
}

func (m *Manager) waited(ctx context.Context) {
	if m.Trace.Waited != nil {
		m.Trace.Waited(ctx)
	}
}
