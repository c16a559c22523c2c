//go:build clientgo_pre33

package shim

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// client-go before v0.33: the ListWatch's list function takes no context.

// wrapList puts wrap around the ListWatch's list function.
func wrapList(lw *cache.ListWatch, wrap func(o metav1.ListOptions, list func(metav1.ListOptions) (runtime.Object, error)) (runtime.Object, error)) {
	list := lw.ListFunc
	lw.ListFunc = func(o metav1.ListOptions) (runtime.Object, error) { return wrap(o, list) }
}
