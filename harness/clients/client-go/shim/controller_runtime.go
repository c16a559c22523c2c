//go:build controllerruntime

package shim

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"listwatch.dev/listwatchtest"
)

// hasControllerRuntime: this program was built with controller-runtime (the shim's own release).
const hasControllerRuntime = true

// controllerRuntimeCache is controller-runtime's informer cache as a manager starts it (cache.New with
// the manager's options, Start, WaitForCacheSync), cluster-wide as a manager's cache is unless told
// otherwise, with one informer for ConfigMaps that a controller's watch would create (GetInformer)
// and a handler on it. What the harness judges is what the controller reads: the cache through its
// client.Reader (List) once the informer has synced (before that a Reader blocks its caller until it
// has, so the informer's store stands in for it), and the informer's RV and HasSynced.
type controllerRuntimeCache struct {
	cache.SharedIndexInformer // its RV and HasSynced
	cache                     crcache.Cache
	ctx                       context.Context
}

func (c *controllerRuntimeCache) GetStore() cache.Store {
	return readerStore{c.SharedIndexInformer.GetStore(), c}
}

// readerStore is the informer's store, listed through the cache's client.Reader once it has synced.
type readerStore struct {
	cache.Store
	c *controllerRuntimeCache
}

func (r readerStore) List() []any {
	if !r.c.HasSynced() {
		return r.Store.List()
	}
	var list corev1.ConfigMapList
	if err := r.c.cache.List(r.c.ctx, &list); err != nil {
		panic(fmt.Sprintf("controller-runtime's cache refused a List once synced: %v", err))
	}
	out := make([]any, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// beginControllerRuntime builds controller-runtime's cache over cfg, gets the ConfigMap informer with
// the program's handler, starts the cache and the waiters on its WaitForCacheSync.
func runControllerRuntime(env *listwatchtest.Env) error {
	// A static mapper: a manager's default discovers the API over the wire, which is not what is
	// under test here.
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	// SyncPeriod: the configuration's (`,resync=`; controller-runtime adds its ±10% jitter from
	// math/rand, which the session seeds), or none, where a manager's default is 10 h: a period no
	// run reaches changes nothing observable.
	period := resyncPeriod(env)
	opts := crcache.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper, SyncPeriod: &period}
	if env.WatchErrorHandler {
		// The manager's cache sets it on every informer it makes, before the informer runs
		// (pkg/cache/internal/informers.go, SetWatchErrorHandlerWithContext).
		opts.DefaultWatchErrorHandler = func(_ context.Context, _ *cache.Reflector, err error) { env.Told(err) }
	}
	c, err := crcache.New(env.Config, opts)
	if err != nil {
		return fmt.Errorf("controller-runtime's cache.New: %w", err)
	}
	ctx := env.Context
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return fmt.Errorf("controller-runtime's GetInformer: %w", err)
	}
	shared, ok := inf.(cache.SharedIndexInformer)
	if !ok {
		return fmt.Errorf("controller-runtime's informer is a %T, not a SharedIndexInformer", inf)
	}
	if _, err := inf.AddEventHandler(env.Handler()); err != nil {
		return fmt.Errorf("adding the event handler: %w", err)
	}
	env.Show(&controllerRuntimeCache{SharedIndexInformer: shared, cache: c, ctx: ctx})
	env.Go(func() {
		if err := c.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "controller-runtime's cache ended: %v\n", err)
		}
	})
	env.StartWaiters(func() bool { return c.WaitForCacheSync(ctx) })
	return nil
}
