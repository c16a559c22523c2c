package shim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// clients is every mode the shim runs: client-go's own pieces, each a client of listwatchtest as a
// user's code would be.
func clients(mode string) (listwatchtest.Client, error) {
	if !watchListGate && os.Getenv("KUBE_FEATURE_WatchListClient") == "true" {
		return nil, errors.New("KUBE_FEATURE_WatchListClient=true, but this client-go release has no WatchListClient gate (v0.31 and later)")
	}
	if mode == "pager" || strings.HasPrefix(mode, "pager,") {
		return runPager(mode)
	}
	switch mode {
	case "", "informer":
		return runInformer, nil
	case "indexer-informer":
		return runIndexerInformer, nil
	case "store-informer":
		return runStoreInformer, nil
	case "list-watch-until":
		return runListWatchUntil, nil
	case "informer-watcher":
		return runInformerWatcher, nil
	case "retrywatcher":
		return runRetry, nil
	case "fifo":
		return runFifo, nil
	case "reflector":
		return runReflector, nil
	case "controller-runtime":
		return runControllerRuntime, nil
	}
	return nil, fmt.Errorf("mode %q is not informer, indexer-informer, store-informer, list-watch-until, informer-watcher, retrywatcher, fifo, reflector, pager or controller-runtime", mode)
}

// coreCodecs decode what the shim's REST client receives: core/v1 and meta/v1 (lists, watch events,
// Status), registered as k8s.io/client-go/kubernetes/scheme registers them. That scheme (which the typed
// clientset imports) registers every API group, and would double the build of each release (about 95 s
// instead of 53 s, and 400 MB of Go's build cache instead of 200, measured on v0.37.2 from an empty cache)
// for types the shim never decodes.
var coreCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// listWatch is the ListWatch of ConfigMaps in the world's namespace over env's config, listing in
// pages of env.PageSize where it asks for pages. Its REST client is the one the typed clientset's
// CoreV1().RESTClient() returns: the same defaults (kubernetes/typed/core/v1's setConfigDefaults, the
// same in every release from v0.15), over coreCodecs.
func listWatch(env *listwatchtest.Env) (*cache.ListWatch, error) {
	config := rest.CopyConfig(env.Config)
	config.GroupVersion = &corev1.SchemeGroupVersion
	config.APIPath = "/api"
	config.NegotiatedSerializer = coreCodecs.WithoutConversion()
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("building the client: %w", err)
	}
	lw := cache.NewListWatchFromClient(client, "configmaps", env.Namespace, fields.Everything())
	if env.PageSize > 0 {
		pageSizeLister(lw, int64(env.PageSize))
	}
	return lw, nil
}

// pageSizeLister makes the reflector list in pages of n, as Reflector.WatchListPageSize = n would:
// a SharedIndexInformer offers no way to set that field, so the informer's ListWatch sets the page
// limit the same way the reflector's pager would with PageSize = n: every page (first and continued)
// asks for limit n, except the pager's own fallback to one unpaginated LIST after a continued page
// failed with 410 Expired, which keeps limit 0.
func pageSizeLister(lw *cache.ListWatch, n int64) {
	fallback := false
	wrapList(lw, func(o metav1.ListOptions, list func(metav1.ListOptions) (runtime.Object, error)) (runtime.Object, error) {
		if fallback && o.Limit == 0 && o.Continue == "" {
			fallback = false
		} else {
			o.Limit = n
		}
		obj, err := list(o)
		fallback = o.Continue != "" && apierrors.IsResourceExpired(err)
		return obj, err
	})
}

// runInformer is a SharedIndexInformer with the program's handler (and, with env.Transform, the
// strict transform; with env.WatchErrorHandler, a watch error handler that tells env.Told), and the waiters on its HasSynced; with env.PanicOnce, a handler that panics
// once; with env.SlowHandler, the handler behind a gate the harness holds (env.Holdable). With
// either, the waiters wait on the handler registration's HasSynced where the release has one (v0.27
// on), as a controller waits for its own handler to have been told of the first list.
func runInformer(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	return runInformerOn(env, lw)
}

// runInformerOn is runInformer over the ListWatch lw.
func runInformerOn(env *listwatchtest.Env, lw *cache.ListWatch) error {
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, resyncPeriod(env), cache.Indexers{})
	env.Show(informer)
	if env.Transform {
		if err := setTransform(informer, strictTransform); err != nil {
			return fmt.Errorf("setting the transform: %w", err)
		}
	}
	if env.WatchErrorHandler {
		if err := setWatchErrorHandler(env, informer); err != nil {
			return fmt.Errorf("setting the watch error handler: %w", err)
		}
	}
	synced, h := informer.HasSynced, env.Handler()
	if env.PanicOnce {
		h = panickingHandler(env)
	}
	if env.SlowHandler {
		h = env.Holdable(h)
	}
	if env.PanicOnce || (env.SlowHandler && hasRegistrationSynced) {
		var err error
		if synced, err = addHandlerSynced(informer, h); err != nil {
			return fmt.Errorf("adding the event handler: %w", err)
		}
	} else if err := addEventHandler(informer, h); err != nil {
		return fmt.Errorf("adding the event handler: %w", err)
	}
	if err := addMoreHandlers(env, informer); err != nil {
		return err
	}
	go informer.Run(env.Stop)
	env.StartWaiters(env.WaitForCacheSync(synced))
	return nil
}

// addMoreHandlers adds the handlers after the first that env.Handlers asks for, the k-th (from 0)
// with k+1 times the resync period (none without one): each has its own queue in the informer, and
// is told what a resync brings only when its own period has run out.
func addMoreHandlers(env *listwatchtest.Env, informer cache.SharedIndexInformer) error {
	for k := 1; k < env.Handlers; k++ {
		period := time.Duration(0)
		if env.Resync > 0 {
			period = time.Duration(k+1) * env.Resync
		}
		if err := addEventHandlerWithResyncPeriod(informer, env.HandlerFor(k), period); err != nil {
			return fmt.Errorf("adding event handler %d: %w", k, err)
		}
	}
	return nil
}
