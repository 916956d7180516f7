//go:build e2e && e2enode

package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// stepCounts are the Task sizes timed; the per-step cost is the slope
// between the first and the last.
var stepCounts = []int{1, 3, 10}

// BenchmarkNodeStepCost times, on a cluster whose one node is a real
// kubelet, containerd and runc (hack/real-node.sh), how long a run of N
// steps takes from its creation to Succeeded, one run at a time: as a
// minitask TaskRun with its Pod chained (and, on request, as init
// containers), and as the bare Pods of stepCostRuns
// (the floor, one container running every step; the controller's
// init-container Pod; Tekton's shape), for 1, 3 and 10 steps of each of
// stepKinds, on each node of benchNodes. Each run is split in three by
// containerd's own times (stepClock): until its first step started, its
// steps (first start to last end), and from the last end until Succeeded was
// seen. It reports the medians of BENCH_NODE_RUNS runs (10), the p90 of the
// whole, how far the whole's median is over the floor's and over Tekton's
// (over-floor-ms, over-tekton-ms: the goals), and, for 10 steps, the cost of
// one more step: the slope from 1 to 10 steps of the steps' median
// (ms/step), and of the whole's (run-ms/step, what a user waits, but for
// whole seconds of noise: the kubelet ends a Pod at its next relist, and
// the runs, one after another, fall into step with it). In each round every
// run, kind and size takes its turn, so that a machine whose speed drifts
// slows them all alike. BENCH_NODE_PODS=NAME,... picks the runs; asked for
// both TaskRuns, it runs those of one Pod shape together, as the manager's
// --pod-shape is one for all (it restarts between them, once a round, and a
// warm-up run follows). It ignores b.N: run it with
// -benchtime=1x. Build tag e2enode; it skips, in one line, on a machine that
// cannot run a real node (hack/real-node.sh check).
func BenchmarkNodeStepCost(b *testing.B) {
	skipUnlessRealNode(b)
	runs := runsFromEnv(b, "BENCH_NODE_RUNS", 10)
	picked := pickedRuns(b)
	for _, node := range benchNodes(b) {
		b.Run("pleg="+node.name, func(b *testing.B) {
			if node.why != "" {
				b.Skip(node.why)
			}
			times := measureStepCosts(b, node, picked, runs)
			for _, run := range picked {
				b.Run("run="+run.name, func(b *testing.B) {
					for _, kind := range stepKinds {
						b.Run("step="+kind.name, func(b *testing.B) {
							reportStepCosts(b, times, run.name, kind.name)
						})
					}
				})
			}
		})
	}
}

// timesKey names the runs of one way of running (stepCostRun's name), one
// kind of step and one size.
type timesKey struct {
	run, kind string
	steps     int
}

// pickedRuns are the runs of stepCostRuns that BENCH_NODE_PODS=NAME,...
// names; by default, all but those run on request. The goals need
// taskrun-chained, one-container and tekton.
func pickedRuns(b *testing.B) []stepCostRun {
	b.Helper()
	env := os.Getenv("BENCH_NODE_PODS")
	if env == "" {
		return slices.DeleteFunc(slices.Clone(stepCostRuns), func(r stepCostRun) bool { return r.onRequest })
	}
	var picked []stepCostRun
	for _, name := range strings.Split(env, ",") {
		i := slices.IndexFunc(stepCostRuns, func(r stepCostRun) bool { return r.name == name })
		if i < 0 {
			var names []string
			for _, r := range stepCostRuns {
				names = append(names, r.name)
			}
			b.Fatalf("BENCH_NODE_PODS: no run %q; the runs are %s", name, strings.Join(names, ", "))
		}
		picked = append(picked, stepCostRuns[i])
	}
	return picked
}

// phases are the manager's Pod shapes that the TaskRuns of runs need, in
// order, and the runs of each: a TaskRun's runs in its shape's phase, a bare
// Pod's in the first. Runs of bare Pods alone make one phase in the
// manager's default shape. Every phase but the first costs a restart of
// the manager a round.
func phases(runs []stepCostRun) ([]string, map[string][]stepCostRun) {
	var shapes []string
	byShape := map[string][]stepCostRun{}
	for _, run := range runs {
		if run.podShape != "" && !slices.Contains(shapes, run.podShape) {
			shapes = append(shapes, run.podShape)
		}
	}
	if len(shapes) == 0 {
		shapes = []string{runstate.PodShapeInitContainers}
	}
	for _, run := range runs {
		shape := cmp.Or(run.podShape, shapes[0])
		byShape[shape] = append(byShape[shape], run)
	}
	return shapes, byShape
}

// measureStepCosts creates a cluster on node, starts bin/manager on it and
// times each of picked for each kind of step and each of stepCounts, runs
// times, after one untimed warm-up run of each: the durations.
func measureStepCosts(b *testing.B, node benchNode, picked []stepCostRun, runs int) map[timesKey][]runTimes {
	c := newBenchNodeCluster(b, "bench-node-"+node.name, node)
	shapes, byShape := phases(picked)
	// The warm-up goes through the phases backwards, so that the first round
	// starts in the shape the manager has.
	shape := shapes[len(shapes)-1]
	m := startManager(b, c, "--pod-shape="+shape)
	w := watchFinished(b, c)
	w.steps = newStepClock(b, c)
	for _, kind := range stepKinds {
		for _, n := range stepCounts {
			create(b, c, stepTask(kind, n))
		}
	}
	warmUps := 0
	warmUp := func(runs []stepCostRun) {
		for _, run := range runs {
			warmUps++
			w.time(b, c, run, stepTask(stepKinds[0], stepCounts[0]), fmt.Sprintf("%s-warm-up-%d", run.name, warmUps))
		}
	}
	use := func(want string) {
		if want == shape {
			return
		}
		restartWithPodShape(m, want)
		shape = want
		warmUp(slices.DeleteFunc(slices.Clone(byShape[want]), func(r stepCostRun) bool { return r.podShape == "" }))
	}
	for _, s := range slices.Backward(shapes) {
		use(s)
		warmUp(byShape[s])
	}
	times := map[timesKey][]runTimes{}
	b.Logf("node %s: load average %s at the start", node.name, loadAverage())
	for round := range runs {
		order := slices.Clone(shapes)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		var line []string
		for _, s := range order {
			use(s)
			for _, kind := range stepKinds {
				for _, n := range stepCounts {
					for _, run := range byShape[s] {
						name := fmt.Sprintf("%s-%s-%d-%d", run.name, kind.slug(), n, round)
						took := w.time(b, c, run, stepTask(kind, n), name)
						key := timesKey{run.name, kind.name, n}
						times[key] = append(times[key], took)
						line = append(line, fmt.Sprintf("%s/%s/%d %dms", run.name, kind.name, n, took.total.Milliseconds()))
					}
				}
			}
		}
		b.Logf("node %s, round %d: %s", node.name, round+1, strings.Join(line, ", "))
	}
	b.Logf("node %s: load average %s at the end", node.name, loadAverage())
	return times
}

// restartWithPodShape stops m and starts it again with --pod-shape=shape.
func restartWithPodShape(m *manager, shape string) {
	m.t.Helper()
	m.stop()
	m.args = append(slices.DeleteFunc(m.args, func(arg string) bool { return strings.HasPrefix(arg, "--pod-shape=") }),
		"--pod-shape="+shape)
	m.start()
}

// runTimes is how long one run took, and its three parts.
type runTimes struct {
	// total is from just before its creation until it was seen finished.
	total time.Duration
	// start is until its first step started, steps until its last step
	// ended, end until it was seen finished: they add up to total.
	start, steps, end time.Duration
	// gone is from the deletion of the run and its Pod until the Pod was
	// gone, after the run: no part of total.
	gone time.Duration
	// afterReport is the part of end after the Pod was seen with every
	// step ended (finishWatch.stepsEnded), the kubelet's report of it: what
	// the controller took, without the kubelet's wait for its relist; zero
	// for a Pod without step containers.
	afterReport time.Duration
}

// reportStepCosts reports, for one way of running steps of one kind, each
// step count's medians in ms, the p90 of the whole and how far the whole's
// median is over the floor's and over Tekton's, and the slopes per step.
func reportStepCosts(b *testing.B, times map[timesKey][]runTimes, run, kind string) {
	part := func(run string, n int, of func(runTimes) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, t := range times[timesKey{run, kind, n}] {
			ds = append(ds, of(t))
		}
		return ds
	}
	total := func(t runTimes) time.Duration { return t.total }
	steps := func(t runTimes) time.Duration { return t.steps }
	first, last := stepCounts[0], stepCounts[len(stepCounts)-1]
	slope := func(of func(runTimes) time.Duration) float64 {
		return (median(part(run, last, of)) - median(part(run, first, of))) / float64(last-first)
	}
	for _, n := range stepCounts {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			var each []string
			for _, t := range times[timesKey{run, kind, n}] {
				each = append(each, fmt.Sprintf("%d (%d+%d+%d)", t.total.Milliseconds(),
					t.start.Milliseconds(), t.steps.Milliseconds(), t.end.Milliseconds()))
			}
			b.Logf("each run, in ms (until the first step, the steps, after them): %s", strings.Join(each, " "))
			b.ReportMetric(median(part(run, n, total)), "ms/run")
			b.ReportMetric(percentile(slices.Sorted(slices.Values(part(run, n, total))), 0.9), "p90-ms")
			b.ReportMetric(median(part(run, n, func(t runTimes) time.Duration { return t.start })), "start-ms")
			b.ReportMetric(median(part(run, n, steps)), "steps-ms")
			b.ReportMetric(median(part(run, n, func(t runTimes) time.Duration { return t.end })), "end-ms")
			for unit, other := range map[string]string{"over-floor-ms": floorRun, "over-tekton-ms": tektonRun} {
				if run != other && len(times[timesKey{other, kind, n}]) > 0 {
					b.ReportMetric(median(part(run, n, total))-median(part(other, n, total)), unit)
				}
			}
			if n == last {
				b.ReportMetric(slope(steps), "ms/step")
				b.ReportMetric(slope(total), "run-ms/step")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// median is the median of durations, in ms.
func median(durations []time.Duration) float64 {
	sorted := slices.Sorted(slices.Values(durations))
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return float64(sorted[mid]) / float64(time.Millisecond)
	}
	return float64(sorted[mid-1]+sorted[mid]) / 2 / float64(time.Millisecond)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// finishWatch tells, from informers on the Pods and TaskRuns of ns, when
// each is first seen finished: to within the watch's delivery delay, what a
// user watching them sees.
type finishWatch struct {
	mu      sync.Mutex
	waiting map[string]chan finished
	// steps tells when a finished Pod's steps started and ended.
	steps *stepClock
	// deleteGrace, when set, is the grace period the Pod of a timed run is
	// deleted with, once timed.
	deleteGrace *int64
	// stepsEnded is when each Pod was first seen with every step container
	// ended: when the kubelet's report of the last step's end reached a
	// watch.
	stepsEnded map[string]time.Time
}

// finished is when an object was first seen finished, and how it ended.
type finished struct {
	at      time.Time
	outcome string
}

func watchFinished(b *testing.B, c *cluster) *finishWatch {
	b.Helper()
	w := &finishWatch{waiting: map[string]chan finished{}, stepsEnded: map[string]time.Time{}}
	informers, err := cache.New(c.config, cache.Options{Scheme: c.client.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	on := func(obj any) {
		switch o := obj.(type) {
		case *corev1.Pod:
			if o.Status.Phase == corev1.PodSucceeded || o.Status.Phase == corev1.PodFailed {
				w.seen(o.Name, string(o.Status.Phase))
			}
			if stepsEnded(o) {
				w.seenStepsEnded(o.Name)
			}
		case *v1.TaskRun:
			if runstate.Finished(o) {
				w.seen(o.Name, outcome(o))
			}
		}
	}
	for _, obj := range []client.Object{&corev1.Pod{}, &v1.TaskRun{}} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) },
		}); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		b.Fatal("the benchmark's informers did not sync")
	}
	return w
}

func (w *finishWatch) seen(name, outcome string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.waiting[name]; ok {
		delete(w.waiting, name)
		ch <- finished{now, outcome}
	}
}

func (w *finishWatch) seenStepsEnded(pod string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.stepsEnded[pod]; !ok {
		w.stepsEnded[pod] = now
	}
}

// stepsEnded reports whether pod has step containers
// (runstate.StepContainerPrefix) and every one of them has ended.
func stepsEnded(pod *corev1.Pod) bool {
	ended := map[string]bool{}
	for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		ended[s.Name] = s.State.Terminated != nil
	}
	steps := 0
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if strings.HasPrefix(c.Name, runstate.StepContainerPrefix) {
			if !ended[c.Name] {
				return false
			}
			steps++
		}
	}
	return steps > 0
}

// time creates run's object for task, named name, waits until it has
// Succeeded and returns how long that took from just before its creation,
// in its parts. Then it deletes the object and waits until its Pod is gone
// (deleted with deleteGrace), so that the next run has the node to itself.
func (w *finishWatch) time(b *testing.B, c *cluster, run stepCostRun, task *v1.Task, name string) runTimes {
	b.Helper()
	ctx := context.Background()
	obj := run.object(name, task)
	ch := make(chan finished, 1)
	w.mu.Lock()
	w.waiting[name] = ch
	w.mu.Unlock()
	start := time.Now()
	if err := c.client.Create(ctx, obj); err != nil {
		b.Fatalf("creating %s: %v", name, err)
	}
	var end finished
	select {
	case end = <-ch:
	case <-time.After(3 * time.Minute):
		b.Fatalf("%s (%d steps, %s) did not finish within 3 minutes", name, len(task.Spec.Steps), run.name)
	}
	want, podName := string(corev1.PodSucceeded), name
	if tr, ok := obj.(*v1.TaskRun); ok {
		want, podName = "True/Succeeded", runstate.PodName(tr)
	}
	if end.outcome != want {
		b.Fatalf("%s (%d steps, %s) ended %s, want %s", name, len(task.Spec.Steps), run.name, end.outcome, want)
	}
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, pod); err != nil {
		b.Fatalf("reading Pod %s: %v", podName, err)
	}
	if err := checkPodShape(run, task, pod); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	span, err := w.steps.span(ctx, pod.UID)
	if err != nil {
		b.Fatal(err)
	}
	w.mu.Lock()
	stepsSeen, seen := w.stepsEnded[podName]
	delete(w.stepsEnded, podName)
	w.mu.Unlock()
	deleted := time.Now()
	if err := c.client.Delete(ctx, obj, client.PropagationPolicy("Background")); err != nil {
		b.Fatalf("deleting %s: %v", name, err)
	}
	var opts []client.DeleteOption
	if w.deleteGrace != nil {
		opts = append(opts, client.GracePeriodSeconds(*w.deleteGrace))
	}
	if err := c.client.Delete(ctx, pod, opts...); err != nil && !apierrors.IsNotFound(err) {
		b.Fatalf("deleting Pod %s: %v", podName, err)
	}
	waitFor(b, time.Minute, "Pod "+podName+" to be gone", func(ctx context.Context) error {
		err := c.client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("reading it: %w", err)
		}
		return errors.New("still there")
	})
	took := runTimes{total: end.at.Sub(start),
		start: span.start.Sub(start), steps: span.end.Sub(span.start), end: end.at.Sub(span.end),
		gone: time.Since(deleted)}
	if seen {
		took.afterReport = end.at.Sub(stepsSeen)
	}
	return took
}

// checkPodShape says whether a TaskRun's Pod has the shape its run is named
// for: a fallback to init containers would time another shape under the
// chained one's name.
func checkPodShape(run stepCostRun, task *v1.Task, pod *corev1.Pod) error {
	if run.podShape == "" || len(task.Spec.Steps) < 2 {
		return nil
	}
	if chained := runstate.Chained(pod); chained != (run.podShape == runstate.PodShapeChained) {
		return fmt.Errorf("Pod %s is chained: %t, want %t for %s (%s: %q)", pod.Name, chained, !chained, run.name,
			runstate.AnnotationPodShapeReason, pod.Annotations[runstate.AnnotationPodShapeReason])
	}
	return nil
}
