package shim

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// transformedMark is the annotation the strict transform sets on every object it transforms.
const transformedMark = "listwatch.transformed"

// strictTransform is what `,transform` gives the informer through SetTransform: what a controller's
// transform does to save memory (managedFields dropped), on a copy, and a mark on what it returned.
// It refuses an object it already transformed: client-go documents that a transform sees each object
// once, before any other actor, unless a caller passes objects already in the cache to Replace, which
// default informers do not (tools/cache/delta_fifo.go). An object transformed twice fails its Add,
// Update or Replace, and what the harness judges shows it.
func strictTransform(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		// A DeletedFinalStateUnknown tombstone, say: left as it is.
		return obj, nil
	}
	if cm.Annotations[transformedMark] != "" {
		return nil, fmt.Errorf("the transform saw %s/%s a second time", cm.Namespace, cm.Name)
	}
	out := cm.DeepCopy()
	out.ManagedFields = nil
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[transformedMark] = "true"
	return out, nil
}
