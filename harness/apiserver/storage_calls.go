//go:build !apiserver_pre24

package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// listAll lists every object of the resource: a recursive GetList (v0.24 on).
func listAll(ctx context.Context, st storage.Interface, opts storage.ListOptions, out runtime.Object) error {
	opts.Recursive = true
	return st.GetList(ctx, resourcePrefix, opts, out)
}

// listOne lists the object at one key: a GetList that is not recursive (v0.24 on).
func listOne(ctx context.Context, st storage.Interface, key string, opts storage.ListOptions, out runtime.Object) error {
	opts.Recursive = false
	return st.GetList(ctx, key, opts, out)
}

// watchAll watches every object of the resource: a recursive Watch (v0.24 on).
func watchAll(ctx context.Context, st storage.Interface, opts storage.ListOptions) (watch.Interface, error) {
	opts.Recursive = true
	return st.Watch(ctx, resourcePrefix, opts)
}
