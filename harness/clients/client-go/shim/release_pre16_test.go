//go:build clientgo_pre16

package shim

func init() {
	// Before v0.16 the reflector asks for no bookmarks, and a refused watch ends ListAndWatch.
	watchPrefix = ""
	refusedWatchRelists = true
}
