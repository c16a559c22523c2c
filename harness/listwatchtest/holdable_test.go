package listwatchtest

import (
	"testing"
	"testing/synctest"

	"k8s.io/client-go/tools/cache"
)

// TestHoldableHoldsItsHandler: a closed gate holds the handler's caller (durably, so the bubble
// goes still) and counts it as waiting; opened, the call goes through; an open gate lets calls by.
func TestHoldableHoldsItsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &session{}
		env := &Env{s: s}
		var told []string
		h := env.Holdable(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) { told = append(told, obj.(string)) },
		})
		g, ok := s.fifo.(*gate)
		if !ok || len(s.closers) != 1 {
			t.Fatalf("Holdable registered %T and %d closers", s.fifo, len(s.closers))
		}
		h.AddFunc("a")
		g.SetHeld(true)
		go h.AddFunc("b")
		synctest.Wait()
		if g.Queued() != 1 || len(told) != 1 {
			t.Fatalf("held: %d waiting, told %v", g.Queued(), told)
		}
		g.SetHeld(false)
		synctest.Wait()
		if g.Queued() != 0 || len(told) != 2 || told[1] != "b" {
			t.Fatalf("released: %d waiting, told %v", g.Queued(), told)
		}
		if h.UpdateFunc != nil || h.DeleteFunc != nil {
			t.Fatal("Holdable filled in handler funcs the handler did not have")
		}
		g.SetHeld(true)
		go h.AddFunc("c")
		synctest.Wait()
		s.closers[0]() // the run stops: the held call must return
		synctest.Wait()
		if len(told) != 3 {
			t.Fatalf("after the run stopped: told %v", told)
		}
	})
}
