//go:build clientgo_pre16

package shim

import (
	"flag"

	"k8s.io/klog"
)

// Before v0.16 client-go logs through klog v0.3, whose init leaves every message going to files in the
// temporary directory (a set of `client-go-shim-*.log.*` files and links a run) until InitFlags sets
// its defaults; klog v1.0, from client-go v0.16 on, sets them in init (klog v0.3.1 and v1.0.0,
// klog.go: init and InitFlags). Here they are set at once, so the shim logs to stderr as every later
// release does. The flags go into a set of their own: the shim is a test binary, whose command line
// belongs to package testing.
func init() {
	klog.InitFlags(flag.NewFlagSet("klog", flag.ContinueOnError))
}
