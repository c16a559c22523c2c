package healthcache

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// client registers a cache made by build as listwatch's client under test, its health check
// listwatch's env.Told: what the cache tells its user of a failure is judged by failures-told.
func client(build func(cache.ListerWatcher, cache.ResourceEventHandler, func(error)) (*Cache, error)) listwatchtest.Client {
	return func(env *listwatchtest.Env) error {
		cs, err := kubernetes.NewForConfig(env.Config)
		if err != nil {
			return err
		}
		lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", env.Namespace, fields.Everything())
		c, err := build(lw, env.Handler(), env.Told)
		if err != nil {
			return err
		}
		env.Show(c)
		env.Go(func() { c.Run(env.Context) })
		env.StartWaiters(env.WaitForCacheSync(c.HasSynced))
		return nil
	}
}

// campaign is the first 100 seeds, with failures-told judged: the cache says it tells its user.
var campaign = listwatchtest.Campaign{Seeds: 100, WatchErrorHandler: true}

// TestCache: the cache tells its health check of every failure before it tries again. It lists and
// watches (KUBE_FEATURE_WatchListClient=false), so that client-go's own finding on the streaming list
// (configindex's TestIndex) does not hide this one; every property holds.
func TestCache(t *testing.T) {
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	listwatchtest.Run(t, client(New), campaign)
}

// TestSettingHandlerLate serves the cache with the bug; TestSettingHandlerLateIsCaught runs it and
// expects listwatch to find a failure that nobody was told of.
func TestSettingHandlerLate(t *testing.T) {
	if testing.Short() {
		t.Skip("the cache with the bug fails: run by TestSettingHandlerLateIsCaught")
	}
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	listwatchtest.Run(t, client(NewSettingHandlerLate), campaign)
}

func TestSettingHandlerLateIsCaught(t *testing.T) {
	failures, err := listwatchtest.Simulate("TestSettingHandlerLate", campaign)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		if f.Property == "failures-told" && f.Trace != "" {
			t.Logf("found as expected: seed %d, %s (trace %s)", f.Seed, f.Detail, f.Trace)
			return
		}
	}
	t.Fatalf("failures-told not broken; failures: %+v", failures)
}
