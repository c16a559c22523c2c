//go:build !clientgo_pre18

package shim

// relistQuery is the query of a relist after a watch failed with RV 9 last seen: v0.18 and later
// relist at the last RV.
const relistQuery = "resourceVersion=9"
