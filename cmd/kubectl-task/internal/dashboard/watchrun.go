package dashboard

import (
	"context"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
)

// watchRun watches run ns/name until ctx is done, and sends it on the
// channel it returns: as it is first, then as each change leaves it, nil
// once it is deleted. A reader that falls behind gets the latest state
// only: a page shows the run as it is, not each state it passed through.
func watchRun(ctx context.Context, c client.WithWatch, ns, name string) <-chan *v1.TaskRun {
	out := make(chan *v1.TaskRun, 1)
	latest := func(run *v1.TaskRun) {
		for {
			select {
			case out <- run:
				return
			default:
			}
			// Full: drop the older state for this one.
			select {
			case <-out:
			default:
			}
		}
	}
	lw := runindex.ListWatchSelected(c, ns, fields.OneTermEqualSelector("metadata.name", name))
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &v1.TaskRun{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { latest(obj.(*v1.TaskRun)) },
			UpdateFunc: func(_, obj any) { latest(obj.(*v1.TaskRun)) },
			DeleteFunc: func(any) { latest(nil) },
		},
	})
	go informer.RunWithContext(ctx)
	return out
}
