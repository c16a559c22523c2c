// Package configindex is a small controller built on controller-runtime, as its users write one:
// it keeps an index of every ConfigMap, which an API of its own serves to other programs. Its
// reconciler reads each ConfigMap it is asked about through the manager's client (the manager's
// cache) and puts what it read into the index, or takes the key out when the ConfigMap is gone.
package configindex

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Index is the controller: its reconciler and the index it keeps.
type Index struct {
	client client.Reader
	// index holds the last state the reconciler read of each ConfigMap (a thread-safe store,
	// keyed namespace/name): what the controller believes, and what its API serves.
	index cache.Store
}

// New makes the controller over the manager's client and registers it with the manager, which
// starts it (and the informer its watch needs) when it starts.
func New(mgr ctrl.Manager, opts controller.Options) (*Index, error) {
	ix := &Index{client: mgr.GetClient(), index: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("configindex").
		For(&corev1.ConfigMap{}).
		WithOptions(opts).
		Complete(ix)
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Reconcile brings the index's entry for req up to date with the cache.
func (ix *Index) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	err := ix.client.Get(ctx, req.NamespacedName, &cm)
	switch {
	case apierrors.IsNotFound(err):
		if old, ok, _ := ix.index.GetByKey(req.String()); ok {
			return ctrl.Result{}, ix.index.Delete(old)
		}
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, ix.index.Update(cm.DeepCopy())
}

// Store is the index as a client-go store (read it, never write it).
func (ix *Index) Store() cache.Store { return ix.index }
