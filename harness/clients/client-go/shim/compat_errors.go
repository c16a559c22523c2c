//go:build !clientgo_pre31

package shim

import (
	"context"
	"fmt"
	"os"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// apimachinery v0.31 and later: error and panic handlers take a context.

// setErrorHandler makes a stderr logger the only error handler.
func setErrorHandler() {
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(_ context.Context, err error, msg string, kv ...any) {
			fmt.Fprintf(os.Stderr, "client-go error: %s: %v %v\n", msg, err, kv)
		},
	}
}

// addPanicHandler adds f to the panic handlers.
func addPanicHandler(f func(r any)) {
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(_ context.Context, r any) { f(r) })
}

// watchListGate: the reflector honours the WatchListClient feature gate (KUBE_FEATURE_WatchListClient).
const watchListGate = true
