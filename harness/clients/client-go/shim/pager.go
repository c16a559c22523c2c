//go:build !clientgo_pre19

package shim

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"listwatch.dev/listwatchtest"
)

// pagerOptions are what a caller of tools/pager passes in its ListOptions (mode
// "pager[,rv=0|unset][,match=NotOlderThan|Exact]").
type pagerOptions struct {
	// rv replaces the resourceVersion the reflector asks for: "0" (any), "unset" (a consistent
	// read), or "" to pass the reflector's own.
	rv string
	// match is the resourceVersionMatch passed with a resourceVersion other than "" (and, for Exact,
	// other than "0", which the API server refuses with Exact).
	match metav1.ResourceVersionMatch
}

// parsePager reads the options of mode "pager,...".
func parsePager(mode string) (pagerOptions, error) {
	var o pagerOptions
	for _, opt := range strings.Split(mode, ",")[1:] {
		switch opt {
		case "rv=0":
			o.rv = "0"
		case "rv=unset":
			o.rv = "unset"
		case "match=NotOlderThan":
			o.match = metav1.ResourceVersionMatchNotOlderThan
		case "match=Exact":
			o.match = metav1.ResourceVersionMatchExact
		default:
			return o, fmt.Errorf("mode %q: unknown pager option %q (rv=0, rv=unset, match=NotOlderThan, match=Exact)", mode, opt)
		}
	}
	return o, nil
}

// runPager is a SharedIndexInformer (as runInformer builds it) whose ListWatch lists through
// tools/pager's ListPager, as code with a list function of its own does: pages of env.PageSize, with
// the resourceVersion and resourceVersionMatch the options give. The reflector's own pager then sees
// one page with no continue token, which it returns as it is.
func runPager(mode string) (listwatchtest.Client, error) {
	o, err := parsePager(mode)
	if err != nil {
		return nil, err
	}
	return func(env *listwatchtest.Env) error {
		pageSize := int64(env.PageSize)
		env.PageSize = 0
		lw, err := listWatch(env)
		if err != nil {
			return err
		}
		wrapList(lw, func(asked metav1.ListOptions, list func(metav1.ListOptions) (runtime.Object, error)) (runtime.Object, error) {
			return o.list(asked, list, pageSize)
		})
		return runInformerOn(env, lw)
	}, nil
}

// list is one LIST of the caller's: the reflector's options with its paging dropped and the
// caller's resourceVersion and match, through a new ListPager of pageSize.
func (o pagerOptions) list(asked metav1.ListOptions, list func(metav1.ListOptions) (runtime.Object, error), pageSize int64) (runtime.Object, error) {
	opts := asked
	opts.Limit, opts.Continue = 0, ""
	switch o.rv {
	case "0":
		opts.ResourceVersion = "0"
	case "unset":
		opts.ResourceVersion = ""
	}
	opts.ResourceVersionMatch = ""
	if o.match != "" && opts.ResourceVersion != "" && (o.match != metav1.ResourceVersionMatchExact || opts.ResourceVersion != "0") {
		opts.ResourceVersionMatch = o.match
	}
	p := pager.New(pager.SimplePageFunc(list))
	p.PageSize = pageSize
	obj, _, err := p.List(context.Background(), opts)
	return obj, err
}

// pagerModes: the pager's configurations run in this release.
const pagerModes = true
