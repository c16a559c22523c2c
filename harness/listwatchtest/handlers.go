package listwatchtest

import (
	"fmt"
	"os"
	"reflect"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// apimachinery's error and panic handlers changed type in v0.31 (they took no context before), so
// they are set through reflection: this package builds against any client-go from v0.15.

// setErrorHandler makes a stderr logger the only error handler. apimachinery's default handlers
// include a rudimentary backoff that compares the bubble's fake clock with a real time taken at
// package init: inside a bubble it sleeps for decades.
func setErrorHandler() {
	handlers := reflect.ValueOf(&utilruntime.ErrorHandlers).Elem()
	logger := reflect.MakeFunc(handlers.Type().Elem(), func(args []reflect.Value) []reflect.Value {
		text := "client error:"
		for _, a := range args {
			if a.Kind() == reflect.Interface && a.Type().Name() == "Context" {
				continue
			}
			text += fmt.Sprintf(" %v", a.Interface())
		}
		fmt.Fprintln(os.Stderr, text)
		return nil
	})
	one := reflect.MakeSlice(handlers.Type(), 1, 1)
	one.Index(0).Set(logger)
	handlers.Set(one)
}

// addPanicHandler adds f to the panic handlers; f gets what was recovered.
func addPanicHandler(f func(r interface{})) {
	handlers := reflect.ValueOf(&utilruntime.PanicHandlers).Elem()
	h := reflect.MakeFunc(handlers.Type().Elem(), func(args []reflect.Value) []reflect.Value {
		f(args[len(args)-1].Interface())
		return nil
	})
	handlers.Set(reflect.Append(handlers, h))
}
