//go:build clientgo_pre31

package shim

// watchListGate: before v0.31 the reflector does not read the WatchListClient feature gate (v0.30
// defines it but still reads ENABLE_CLIENT_GO_WATCH_LIST_ALPHA; v0.27–v0.29 have only that variable
// or a field; older ones have no streaming list at all).
const watchListGate = false
