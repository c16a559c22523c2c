//go:build apiserver_pre31

package main

import (
	"context"

	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
)

// cacheReady waits as v0.30 allows, whose cacher has no Wait: a LIST at a revision the cache must
// reach waits for it to be ready (the cacher's GetList, c.ready.wait), and revision 1 is behind any
// etcd's.
func cacheReady(ch *cacher.Cacher) func(context.Context) error {
	return func(ctx context.Context) error {
		opts := storage.ListOptions{ResourceVersion: "1", Predicate: predicate(0, "", false)}
		return listAll(ctx, ch, opts, &example.PodList{})
	}
}
