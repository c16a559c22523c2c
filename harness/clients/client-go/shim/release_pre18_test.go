//go:build clientgo_pre18

package shim

func init() {
	// Before v0.18 every ListAndWatch lists from RV "0" (in pages of 500), whatever it saw.
	relistQuery = "limit=500&resourceVersion=0"
}
