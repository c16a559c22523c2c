//go:build clientgo_pre31

package shim

import (
	"fmt"
	"os"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// apimachinery before v0.31: error handlers are func(error), panic handlers func(interface{}).

// setErrorHandler makes a stderr logger the only error handler.
func setErrorHandler() {
	utilruntime.ErrorHandlers = []func(error){
		func(err error) { fmt.Fprintf(os.Stderr, "client-go error: %v\n", err) },
	}
}

// addPanicHandler adds f to the panic handlers.
func addPanicHandler(f func(r any)) {
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(r interface{}) { f(r) })
}

// watchListGate: before v0.31 the reflector does not read the WatchListClient feature gate (v0.30
// defines it but still reads ENABLE_CLIENT_GO_WATCH_LIST_ALPHA; v0.27–v0.29 have only that variable
// or a field; older ones have no streaming list at all).
const watchListGate = false
