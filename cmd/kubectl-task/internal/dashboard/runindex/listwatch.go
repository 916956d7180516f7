package runindex

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// ListWatch lists and watches the TaskRuns in namespace ns (every namespace
// when ns is empty) through c, with the user's own credentials.
func ListWatch(c client.WithWatch, ns string) cache.ListerWatcher {
	return ListWatchSelected(c, ns, nil)
}

// ListWatchSelected is ListWatch for the runs that sel selects by their
// fields (one by its name, say); nil selects all.
func ListWatchSelected(c client.WithWatch, ns string, sel fields.Selector) cache.ListerWatcher {
	with := func(opts metav1.ListOptions) *client.ListOptions {
		if sel != nil {
			opts.FieldSelector = sel.String()
		}
		return &client.ListOptions{Namespace: ns, Raw: &opts}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &v1.TaskRunList{}
			err := c.List(ctx, list, with(opts))
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &v1.TaskRunList{}, with(opts))
		},
	}
}
