package shim

import (
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// clients is every mode the shim runs: client-go's own pieces, each a client of listwatchtest as a
// user's code would be.
func clients(mode string) (listwatchtest.Client, error) {
	if !watchListGate && os.Getenv("KUBE_FEATURE_WatchListClient") == "true" {
		return nil, errors.New("KUBE_FEATURE_WatchListClient=true, but this client-go release has no WatchListClient gate (v0.31 and later)")
	}
	switch mode {
	case "", "informer":
		return runInformer, nil
	case "indexer-informer":
		return runIndexerInformer, nil
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
	return nil, fmt.Errorf("mode %q is not informer, indexer-informer, informer-watcher, retrywatcher, fifo, reflector or controller-runtime", mode)
}

// listWatch is the ListWatch of ConfigMaps in the world's namespace over env's config, listing in
// pages of env.PageSize where it asks for pages.
func listWatch(env *listwatchtest.Env) (*cache.ListWatch, error) {
	client, err := typedcorev1.NewForConfig(env.Config)
	if err != nil {
		return nil, fmt.Errorf("building the client: %w", err)
	}
	lw := cache.NewListWatchFromClient(client.RESTClient(), "configmaps", env.Namespace, fields.Everything())
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
// strict transform), and the waiters on its HasSynced.
func runInformer(env *listwatchtest.Env) error {
	lw, err := listWatch(env)
	if err != nil {
		return err
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, resyncPeriod, cache.Indexers{})
	env.Show(informer)
	if env.Transform {
		if err := setTransform(informer, strictTransform); err != nil {
			return fmt.Errorf("setting the transform: %w", err)
		}
	}
	if err := addEventHandler(informer, env.Handler()); err != nil {
		return fmt.Errorf("adding the event handler: %w", err)
	}
	go informer.Run(env.Stop)
	env.StartWaiters(env.WaitForCacheSync(informer.HasSynced))
	return nil
}
