//go:build clientgo_replace_misses_queued

package shim

func init() {
	// Before v0.26.4 (PR #115620) Replace detects deletions among f.knownObjects only.
	replaceMissesQueued = true
}
