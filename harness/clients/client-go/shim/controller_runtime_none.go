//go:build !controllerruntime

package shim

import (
	"errors"

	"listwatch.dev/listwatchtest"
)

// hasControllerRuntime: this program was built without controller-runtime (a release other than the
// shim's own: controller-runtime's pinned release needs the shim's client-go).
const hasControllerRuntime = false

func runControllerRuntime(*listwatchtest.Env) error {
	return errors.New("mode controller-runtime: this program was built without controller-runtime (only the shim's own client-go release has it: scripts/build-client-go)")
}
