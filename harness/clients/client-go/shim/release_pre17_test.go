//go:build clientgo_pre17

package shim

func init() {
	// Before v0.17 the pager keeps the first page's resourceVersion on continued pages.
	continueQuery = "continue=lw.5.0&limit=1&resourceVersion=0"
}
