package shim

import (
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"listwatch.dev/listwatchtest"
)

// panicOnce is h with a bug: its first call tells h what it was told, then panics, as a handler
// does that meets an object it did not expect. Later calls only tell h.
func panicOnce(h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandlerFuncs {
	var once sync.Once
	boom := func() { once.Do(func() { panic("the handler's planned panic (,panic-handler)") }) }
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { h.AddFunc(obj); boom() },
		UpdateFunc: func(old, obj interface{}) { h.UpdateFunc(old, obj); boom() },
		DeleteFunc: func(obj interface{}) { h.DeleteFunc(obj); boom() },
	}
}

// panickingHandler is the program's handler with the bug of panicOnce, in a program that lets
// client-go recover handler panics (utilruntime.ReallyCrash false: processorListener.run then skips
// to the next notification a second later; with the default, true, the process dies). The waiters
// wait on its registration's HasSynced (v0.27 on: the handler has been told of the first list).
func panickingHandler(env *listwatchtest.Env) cache.ResourceEventHandlerFuncs {
	utilruntime.ReallyCrash = false
	env.OnStop(func() { utilruntime.ReallyCrash = true })
	return panicOnce(env.Handler())
}
