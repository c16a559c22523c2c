//go:build sample_pre30

package main

import (
	"k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// noFlowControl turns API Priority and Fairness off through its feature gate: before v0.30 there is
// no switch among the recommended options (it is a server run option), and RecommendedOptions.ApplyTo
// starts it whenever the gate is on and a core API client config exists (v0.27.16). Its flow schemas
// live in the core API, which this server has none of; the max-in-flight limits stand in.
func noFlowControl(*options.RecommendedOptions) error {
	return utilfeature.DefaultMutableFeatureGate.Set("APIPriorityAndFairness=false")
}
