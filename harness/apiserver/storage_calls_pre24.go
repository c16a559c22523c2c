//go:build apiserver_pre24

package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// listAll lists every object of the resource: before v0.24 storage lists a prefix with List (GetToList
// reads one key) and has no Recursive option.
func listAll(ctx context.Context, st storage.Interface, opts storage.ListOptions, out runtime.Object) error {
	return st.List(ctx, resourcePrefix, opts, out)
}

// listOne lists the object at one key: GetToList before v0.24.
func listOne(ctx context.Context, st storage.Interface, key string, opts storage.ListOptions, out runtime.Object) error {
	return st.GetToList(ctx, key, opts, out)
}

// watchAll watches every object of the resource: WatchList before v0.24 (Watch watches one key).
func watchAll(ctx context.Context, st storage.Interface, opts storage.ListOptions) (watch.Interface, error) {
	return st.WatchList(ctx, resourcePrefix, opts)
}
