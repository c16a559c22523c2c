//go:build !apiserver_pre32

package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// deleteObject deletes key unconditionally; from v0.32 Delete takes DeleteOptions.
func deleteObject(ctx context.Context, st storage.Interface, key string, out runtime.Object) error {
	return st.Delete(ctx, key, out, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
}
