package listwatchtest_test

import (
	"context"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// startInformer stands for the code's own: it starts an informer of ConfigMaps in namespace on
// config until stop closes, and returns its HasSynced.
func startInformer(config *rest.Config, namespace string, stop <-chan struct{}) cache.InformerSynced {
	return func() bool { return false }
}

// A manager of clusters registers the function that serves one caller's request, and shows its lock
// and its wait. Its wait for a new cluster's cache is outside the lock and ends with the request's
// context, so an unreachable cluster times out its own callers only.
func ExampleRunManager() {
	var t *testing.T // the test's own
	listwatchtest.RunManager(t, func(env *listwatchtest.ManagerEnv) (listwatchtest.Request, error) {
		var mu sync.Mutex
		synced := map[string]cache.InformerSynced{}
		return func(ctx context.Context, cluster string) error {
			mu.Lock()
			env.Locked(ctx, listwatchtest.Write)
			hasSynced, ok := synced[cluster]
			if !ok {
				config, err := env.ConfigFor(cluster)
				if err != nil {
					env.Unlocked(ctx)
					mu.Unlock()
					return err
				}
				hasSynced = startInformer(config, env.Namespace, env.Stop)
				synced[cluster] = hasSynced
			}
			env.Unlocked(ctx)
			mu.Unlock()
			env.Waiting(ctx, cluster, ctx.Done()) // bounded: ctx ends at the caller's deadline
			defer env.Waited(ctx)
			if !cache.WaitForCacheSync(ctx.Done(), hasSynced) {
				return ctx.Err()
			}
			return nil
		}, nil
	}, listwatchtest.Campaign{Seeds: 100})
}
