//go:build !clientgo_pre33

package shim

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// client-go v0.33 and later: NewListWatchFromClient fills ListWithContextFunc.

// wrapList puts wrap around the ListWatch's list function.
func wrapList(lw *cache.ListWatch, wrap func(o metav1.ListOptions, list func(metav1.ListOptions) (runtime.Object, error)) (runtime.Object, error)) {
	list := lw.ListWithContextFunc
	lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return wrap(o, func(o metav1.ListOptions) (runtime.Object, error) { return list(ctx, o) })
	}
}
