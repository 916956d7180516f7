package runindex

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// health keeps why the index's last list or watch failed, and forgets it
// when one succeeds: the runs page says the list may be stale, or, before
// the first list, that it cannot be read (Forbidden, say), only while that
// is so.
type health struct {
	mu   sync.Mutex
	last error
}

func (h *health) failed(err error) {
	h.mu.Lock()
	h.last = err
	h.mu.Unlock()
}

func (h *health) succeeded() { h.failed(nil) }

func (h *health) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// wrap returns lw, noting how each list and watch call went.
func (h *health) wrap(lw cache.ListerWatcher) cache.ListerWatcher {
	lwc := cache.ToListerWatcherWithContext(lw)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			obj, err := lwc.ListWithContext(ctx, opts)
			h.note(err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := lwc.WatchWithContext(ctx, opts)
			h.note(err)
			return w, err
		},
	}
}

func (h *health) note(err error) {
	if err != nil {
		h.failed(err)
		return
	}
	h.succeeded()
}
