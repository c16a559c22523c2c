// Package listwatchtest puts a Go user's own list/watch code under listwatch: their informer setup,
// their raw watch loop, their hand-written reflector, judged by the same properties as client-go.
//
// A test registers the code as a [Client] and calls [Run]:
//
//	func TestMyReflector(t *testing.T) {
//		listwatchtest.Run(t, func(env *listwatchtest.Env) error {
//			cs, err := typedcorev1.NewForConfig(env.Config)
//			if err != nil {
//				return err
//			}
//			r := myctl.New(cs.ConfigMaps(env.Namespace), env.Handler())
//			env.Show(r)
//			env.Go(func() { r.Run(env.Context) })
//			env.StartWaiters(env.WaitForCacheSync(r.HasSynced))
//			return nil
//		}, listwatchtest.Campaign{Seeds: 100})
//	}
//
// Run starts the listwatch binary ($LISTWATCH, or listwatch on PATH), which runs this test binary
// again with the test selected: there the same Run call serves the client, one seed per
// testing/synctest bubble, its only way out env.Config. The test fails with each property broken,
// its first seed and a trace file that `listwatch show` prints and `listwatch replay` runs again.
//
// A campaign may ask for a resync period and several handlers (Campaign.Resync, Campaign.Handlers):
// the code reads them as env.Resync and env.Handlers, and gives its k-th handler env.HandlerFor(k),
// so that each handler is judged on its own.
//
// Code that tells its users when it cannot list or watch (an informer's watch error handler, a
// health check) calls env.Told with the error; a campaign with Campaign.WatchErrorHandler is then
// judged by failures-told: a failed LIST, or a refused WATCH, is told before the next request.
//
// A property that something the code does not own is known to break (its client-go release, say)
// goes in Campaign.Known with why: Run logs its seeds and traces instead of failing the test.
//
// Code that serves its callers from the caches of many clusters (a multi-cluster client manager)
// registers a [Manager] with [RunManager]: listwatch makes its requests, decides when each
// cluster's first list is answered and which cluster is unreachable, and judges whether every
// request is answered and whether a request holds a lock while it waits with no bound, as the code
// shows through [ManagerEnv.Locked] and [ManagerEnv.Waiting]. A request blocked on a sync.Mutex is
// a verdict naming the waiter and the holder, never a hang.
//
// The package builds against any client-go from v0.15; it uses the client-go of the module that
// imports it.
package listwatchtest
