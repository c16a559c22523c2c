package shim

// What the protocol tests expect on the wire from the release under test: v0.18 and later by
// default; the release_pre*_test.go files, chosen by the same build tags as the compat files, change
// them for older releases.
var (
	// watchPrefix starts every watch query.
	watchPrefix = "allowWatchBookmarks=true&"
	// relistQuery is the query of a relist after a watch failed with RV 9 last seen: the last RV.
	relistQuery = "resourceVersion=9"
	// continueQuery is the query of a continued page of size 1.
	continueQuery = "continue=lw.5.0&limit=1"
	// pagerContinueQuery is the query of a continued page of tools/pager's, size 1, after a first
	// page asked with resourceVersion=9&resourceVersionMatch=Exact.
	pagerContinueQuery = "continue=lw.9.0&limit=1"
	// refusedWatchRelists: a refused watch ends ListAndWatch (a relist) instead of re-watching.
	refusedWatchRelists = false
	// replaceMissesQueued: a DeltaFIFO's Replace finds deletions among its known objects only, not
	// among the keys still queued (before v0.26.4, PR #115620).
	replaceMissesQueued = false
)
