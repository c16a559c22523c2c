package listwatchtest

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/tools/cache"
)

// A timer the harness was not told of, firing before the reported one, halts the session.
func TestHiddenTimerHalts(t *testing.T) {
	setup()
	synctest.Test(t, func(t *testing.T) {
		s := &session{}
		if err := s.begin(command{Cmd: "start", TimeoutMs: 1000}, getOnce); err != nil {
			t.Fatal(err)
		}
		r := s.reply(nil)
		if r.Timer == nil || r.Timer.Kind != "request-timeout" || r.Timer.AfterMs != 1000 {
			t.Fatalf("timer %+v", r.Timer)
		}
		go func() { // a timer the client might have and the harness cannot see
			time.Sleep(300 * time.Millisecond)
			s.mu.Lock()
			s.act()
			s.mu.Unlock()
		}()
		r = s.reply(s.apply(command{Cmd: "fire", Ms: 1000}))
		if r.Halted == nil {
			t.Fatal("not halted")
		}
		t.Log(*r.Halted)
		s.shutdown()
	})
}

// getOnce is a client that sends one GET with the config's timeout and shows an empty store.
func getOnce(env *Env) error {
	c := &http.Client{Transport: env.Config.Transport, Timeout: env.Config.Timeout}
	env.Go(func() {
		if resp, err := c.Get(env.Config.Host + "/api/v1/namespaces/default/configmaps"); err == nil {
			resp.Body.Close()
		}
	})
	env.Show(StoreView(cache.NewStore(cache.MetaNamespaceKeyFunc), nil, nil))
	return nil
}
