//go:build clientgo_pager_keeps_match

package shim

func init() {
	// v0.19.0 to v0.21.8, v0.22.5 and v0.23.1: tools/pager clears resourceVersion on a continued
	// page but keeps resourceVersionMatch (kubernetes#107310; PR #107311 clears both).
	pagerContinueQuery = "continue=lw.9.0&limit=1&resourceVersionMatch=Exact"
}
