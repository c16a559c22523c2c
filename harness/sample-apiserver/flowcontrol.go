//go:build !sample_pre30

package main

import "k8s.io/apiserver/pkg/server/options"

// noFlowControl turns API Priority and Fairness off: its flow schemas live in the core API, which this
// server has none of. The max-in-flight limits stand in.
func noFlowControl(ro *options.RecommendedOptions) error {
	ro.Features.EnablePriorityAndFairness = false
	return nil
}
