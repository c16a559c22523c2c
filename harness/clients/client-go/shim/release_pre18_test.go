//go:build clientgo_pre18

package shim

// relistQuery is the query of a relist after a watch failed with RV 9 last seen: before v0.18 every
// ListAndWatch lists from RV "0" (in pages of 500), whatever it saw.
const relistQuery = "limit=500&resourceVersion=0"
