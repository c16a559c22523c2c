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

// addPanickingHandler adds the program's handler with the bug of panicOnce, in a program that lets
// client-go recover handler panics (utilruntime.ReallyCrash false: processorListener.run then skips
// to the next notification a second later; with the default, true, the process dies), and returns
// the handler registration's HasSynced (v0.27 on: the handler has been told of the first list), on
// which the waiters wait.
func addPanickingHandler(env *listwatchtest.Env, informer cache.SharedIndexInformer) (func() bool, error) {
	utilruntime.ReallyCrash = false
	env.OnStop(func() { utilruntime.ReallyCrash = true })
	return addHandlerSynced(informer, panicOnce(env.Handler()))
}
