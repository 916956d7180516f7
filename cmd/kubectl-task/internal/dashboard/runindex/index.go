// Package runindex is the dashboard's copy of the runs it lists: one watch
// of the TaskRuns in its namespace (or all), kept in memory with only what
// the list shows of each run, so that a page of the newest runs of 10,000
// is cut from memory at once and every status change reaches the open pages
// as it happens. A run's own page reads the run from the API server.
package runindex

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
)

// taskIndex indexes runs by the name of their Task.
const taskIndex = "task"

// subscriberBuffer is how many changes a page's stream may fall behind
// before it is cut off (its page then reads the list afresh).
const subscriberBuffer = 1024

// Change is a run that was added, changed, or (Deleted) removed.
type Change struct {
	Run     *v1.TaskRun
	Deleted bool
}

// Index holds the runs one watch sees.
type Index struct {
	informer cache.SharedIndexInformer
	health   *health

	mu   sync.Mutex
	subs map[chan Change]struct{}
}

// New returns an index of the runs lw lists and watches; Run starts it.
func New(lw cache.ListerWatcher) *Index {
	h := &health{}
	informer := cache.NewSharedIndexInformerWithOptions(h.wrap(lw), &v1.TaskRun{}, cache.SharedIndexInformerOptions{
		Indexers: cache.Indexers{
			cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
			taskIndex: func(obj any) ([]string, error) {
				return []string{obj.(*v1.TaskRun).Spec.TaskRef.Name}, nil
			},
		},
	})
	ix := &Index{informer: informer, health: h, subs: map[chan Change]struct{}{}}
	// Set before Run, which is the only time they can be.
	_ = informer.SetTransform(Slim)
	// The default handler logs through klog onto the user's terminal; the
	// pages say it instead (Err).
	_ = informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { h.failed(err) })
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { ix.publish(obj, false) },
		UpdateFunc: func(_, obj any) { ix.publish(obj, false) },
		DeleteFunc: func(obj any) { ix.publish(obj, true) },
	})
	return ix
}

// Run keeps the index until ctx is done.
func (ix *Index) Run(ctx context.Context) { ix.informer.RunWithContext(ctx) }

// WaitForSync waits until the index holds every run, or ctx is done, or the
// watch fails; it reports whether the index is complete.
func (ix *Index) WaitForSync(ctx context.Context) bool {
	for !ix.informer.HasSynced() {
		if ix.health.err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// Synced reports whether the index has held every run at least once.
func (ix *Index) Synced() bool { return ix.informer.HasSynced() }

// Err is why the last list or watch of runs failed (the API server
// forbids it, say), nil once one has succeeded since.
func (ix *Index) Err() error { return ix.health.err() }

// Subscribe returns the changes from now on, and a function that ends
// them. The channel is closed when the subscriber falls too far behind.
func (ix *Index) Subscribe() (<-chan Change, func()) {
	ch := make(chan Change, subscriberBuffer)
	ix.mu.Lock()
	ix.subs[ch] = struct{}{}
	ix.mu.Unlock()
	return ch, func() { ix.drop(ch) }
}

func (ix *Index) drop(ch chan Change) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if _, ok := ix.subs[ch]; ok {
		delete(ix.subs, ch)
		close(ch)
	}
}

// publish hands a change to every subscriber, never waiting for one.
func (ix *Index) publish(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	run, ok := obj.(*v1.TaskRun)
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for ch := range ix.subs {
		select {
		case ch <- Change{Run: run, Deleted: deleted}:
		default:
			delete(ix.subs, ch)
			close(ch)
		}
	}
}

// Page is one page of the runs a filter selects, newest first.
type Page struct {
	Runs []*v1.TaskRun
	// Total is how many runs the filter selects; Number is this page's,
	// from 1, of Pages.
	Total, Number, Pages int
}

// Keys are the keys (namespace/name) of the runs f selects.
func (ix *Index) Keys(f Filter) map[string]bool {
	keys := map[string]bool{}
	for _, run := range ix.selected(f) {
		keys[run.Namespace+"/"+run.Name] = true
	}
	return keys
}

// Query returns page number (from 1) of size runs that f selects, newest
// first (runinfo.NewestFirst). A number past the last page is the last.
func (ix *Index) Query(f Filter, number, size int) Page {
	runs := ix.selected(f)
	slices.SortFunc(runs, runinfo.NewestFirst)
	p := Page{Total: len(runs), Pages: max(1, (len(runs)+size-1)/size)}
	p.Number = min(max(number, 1), p.Pages)
	start := (p.Number - 1) * size
	p.Runs = runs[start:min(start+size, len(runs))]
	return p
}

// selected are the runs f selects, in no order.
func (ix *Index) selected(f Filter) []*v1.TaskRun {
	var objs []any
	switch {
	case f.Task != "":
		objs, _ = ix.informer.GetIndexer().ByIndex(taskIndex, f.Task)
	case f.Namespace != "":
		objs, _ = ix.informer.GetIndexer().ByIndex(cache.NamespaceIndex, f.Namespace)
	default:
		objs = ix.informer.GetStore().List()
	}
	runs := make([]*v1.TaskRun, 0, len(objs))
	for _, o := range objs {
		if run := o.(*v1.TaskRun); f.Matches(run) {
			runs = append(runs, run)
		}
	}
	return runs
}

// Namespaces and Tasks are the namespaces and the Tasks of the runs held,
// sorted, for the filters' suggestions.
func (ix *Index) Namespaces() []string { return ix.values(cache.NamespaceIndex) }

// Tasks: see Namespaces.
func (ix *Index) Tasks() []string { return ix.values(taskIndex) }

func (ix *Index) values(index string) []string {
	values := ix.informer.GetIndexer().ListIndexFuncValues(index)
	slices.Sort(values)
	return values
}

// Get returns the run held under ns/name, as the list shows it.
func (ix *Index) Get(ns, name string) (*v1.TaskRun, bool) {
	obj, ok, _ := ix.informer.GetStore().GetByKey(ns + "/" + name)
	if !ok {
		return nil, false
	}
	return obj.(*v1.TaskRun), true
}
