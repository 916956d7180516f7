//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// runClock records, for the benchmarks, when each TaskRun was created (when
// its create call returned), when its Pod was first seen, when its Pod was
// first seen ended and when the run was first seen finished, from informers
// on the cluster: what a user watching the runs sees, to within the watch's
// delivery delay.
type runClock struct {
	mu       sync.Mutex
	created  map[string]time.Time
	podSeen  map[string]time.Time
	podEnded map[string]time.Time
	finished map[string]time.Time
}

// watchRuns starts informers on the TaskRuns and Pods of namespace ns and
// returns the clock they keep. They stop when the benchmark ends.
func watchRuns(tb testing.TB, c *cluster) *runClock {
	tb.Helper()
	rc := &runClock{created: map[string]time.Time{}, podSeen: map[string]time.Time{}, podEnded: map[string]time.Time{},
		finished: map[string]time.Time{}}
	informers, err := cache.New(c.config, cache.Options{Scheme: c.client.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	onPod := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "TaskRun" {
				rc.firstSeen(rc.podSeen, ref.Name)
				if phase := pod.Status.Phase; phase == corev1.PodSucceeded || phase == corev1.PodFailed {
					rc.firstSeen(rc.podEnded, ref.Name)
				}
			}
		}
	}
	onRun := func(obj any) {
		if run, ok := obj.(*v1.TaskRun); ok && runstate.Finished(run) {
			rc.firstSeen(rc.finished, run.Name)
		}
	}
	for obj, on := range map[client.Object]func(any){&corev1.Pod{}: onPod, &v1.TaskRun{}: onRun} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) },
		}); err != nil {
			tb.Fatal(err)
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		tb.Fatal("the benchmark's informers did not sync")
	}
	return rc
}

func (rc *runClock) firstSeen(m map[string]time.Time, name string) {
	now := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := m[name]; !ok {
		m[name] = now
	}
}

// createRun creates a v1beta1 TaskRun of Task work and records when it was
// created.
func (rc *runClock) createRun(ctx context.Context, c *cluster, name string) error {
	if err := c.client.Create(ctx, wrappers.TaskRun(ns, name, "work").Obj()); err != nil {
		return fmt.Errorf("creating TaskRun %s: %w", name, err)
	}
	rc.firstSeen(rc.created, name)
	return nil
}

// waitAll waits until every name is in m (podSeen, podEnded or finished) and returns
// when the last one got there.
func (rc *runClock) waitAll(tb testing.TB, m map[string]time.Time, names []string, timeout time.Duration, what string) time.Time {
	tb.Helper()
	var last time.Time
	waitFor(tb, timeout, what, func(context.Context) error {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		missing := 0
		for _, name := range names {
			at, ok := m[name]
			if !ok {
				missing++
			}
			if at.After(last) {
				last = at
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d not yet", missing, len(names))
		}
		return nil
	})
	return last
}

// podLatencies returns, sorted, how long after its creation each named run's
// Pod was first seen.
func (rc *runClock) podLatencies(names []string) []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	latencies := make([]time.Duration, 0, len(names))
	for _, name := range names {
		latencies = append(latencies, rc.podSeen[name].Sub(rc.created[name]))
	}
	slices.Sort(latencies)
	return latencies
}

// percentile is the nearest-rank q-quantile of sorted durations, in ms.
func percentile(sorted []time.Duration, q float64) float64 {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return float64(sorted[max(0, min(i, len(sorted)-1))]) / float64(time.Millisecond)
}

// runNames returns n run names with prefix.
func runNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	return names
}

// runsFromEnv is the count of runs the environment variable name asks
// for, def if it is unset.
func runsFromEnv(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a count of runs", name, s)
	}
	return n
}

// inParallel calls do for each name, workers at a time, and fails on the
// first error.
func inParallel(tb testing.TB, workers int, names []string, do func(name string) error) {
	tb.Helper()
	work := make(chan string)
	errs := make(chan error, len(names))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for name := range work {
				if err := do(name); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}
