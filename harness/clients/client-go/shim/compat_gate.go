//go:build !clientgo_pre31

package shim

// watchListGate: the reflector honours the WatchListClient feature gate (KUBE_FEATURE_WatchListClient).
const watchListGate = true
