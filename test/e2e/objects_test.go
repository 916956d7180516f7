//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// This file holds what every test uses: small builders for v1beta1 objects,
// polling, and the run and Pod queries the assertions share.

// step is a step that runs script in alpine:3. In the local cluster, `sleep N`
// makes it run N seconds and a final `exit N` makes it exit with N (see
// docs/local-cluster.md); anything else runs 1 second and exits 0.
func step(name, script string) v1beta1.Step {
	return v1beta1.Step{Name: name, Image: "alpine:3", Script: script}
}

// newTask returns a v1beta1 Task in ns.
func newTask(name string, steps ...v1beta1.Step) *v1beta1.Task {
	return &v1beta1.Task{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1beta1.TaskSpec{Steps: steps},
	}
}

// alphaTask returns a v1alpha1 Task in ns: what the first release's users wrote.
func alphaTask(name string, steps ...v1alpha1.Step) *v1alpha1.Task {
	return &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.TaskSpec{Steps: steps}}
}

// alphaStep is a v1alpha1 step that runs script in alpine:3 (see step).
func alphaStep(name, script string) v1alpha1.Step {
	return v1alpha1.Step{Name: name, Image: "alpine:3", Script: script}
}

// alphaRun returns a v1alpha1 TaskRun of task in ns.
func alphaRun(name, task string) *v1alpha1.TaskRun {
	return &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.TaskRunSpec{TaskRef: task}}
}

// podName is the name the controller gives a run's Pod (short names), in
// release 2 as now.
func podName(run string) string { return run + "-pod" }

// runBuilder builds a v1beta1 TaskRun, so that a test says only what differs.
type runBuilder struct{ run v1beta1.TaskRun }

// newRun starts a v1beta1 TaskRun of task in ns.
func newRun(name, task string) *runBuilder {
	return &runBuilder{run: v1beta1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: task}},
	}}
}

func (b *runBuilder) param(name, value string) *runBuilder {
	b.run.Spec.Params = append(b.run.Spec.Params, v1beta1.Param{Name: name, Value: value})
	return b
}

func (b *runBuilder) timeout(d time.Duration) *runBuilder {
	b.run.Spec.Timeout = &v1beta1.Duration{Duration: d}
	return b
}

func (b *runBuilder) cancelled() *runBuilder {
	b.run.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
	return b
}

func (b *runBuilder) obj() *v1beta1.TaskRun { return b.run.DeepCopy() }

// create creates objs in order, failing the test on the first error.
func create(t testing.TB, c *cluster, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// waitFor polls check until it returns nil, and fails the test if it has not
// within timeout, with what check last reported: its error says what is
// still missing.
func waitFor(t testing.TB, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			last = check(ctx)
			return last == nil, nil
		})
	if err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, last)
	}
}

// condition returns run's Succeeded condition, or nil.
func condition(run *v1beta1.TaskRun) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded)
}

// finished reports whether run's condition is True or False.
func finished(run *v1beta1.TaskRun) bool {
	cond := condition(run)
	return cond != nil && cond.Status != metav1.ConditionUnknown
}

// outcome is a run's condition as status/reason, e.g. True/Succeeded, for
// messages and comparisons.
func outcome(run *v1beta1.TaskRun) string {
	cond := condition(run)
	if cond == nil {
		return "(no condition)"
	}
	return string(cond.Status) + "/" + cond.Reason
}

// runs returns the v1beta1 TaskRuns in ns by name.
func runs(ctx context.Context, c *cluster) (map[string]*v1beta1.TaskRun, error) {
	var list v1beta1.TaskRunList
	if err := c.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing v1beta1 TaskRuns: %w", err)
	}
	byName := make(map[string]*v1beta1.TaskRun, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	return byName, nil
}

// waitFinished waits until the named runs have finished and returns them.
func waitFinished(t testing.TB, c *cluster, timeout time.Duration, names ...string) map[string]*v1beta1.TaskRun {
	t.Helper()
	var got map[string]*v1beta1.TaskRun
	waitFor(t, timeout, fmt.Sprintf("%d TaskRuns to finish", len(names)), func(ctx context.Context) error {
		all, err := runs(ctx, c)
		if err != nil {
			return err
		}
		var pending []string
		for _, name := range names {
			if run, ok := all[name]; !ok || !finished(run) {
				pending = append(pending, fmt.Sprintf("%s (%s)", name, describe(run)))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d not finished: %s", len(pending), strings.Join(first(pending, 10), ", "))
		}
		got = all
		return nil
	})
	return got
}

func describe(run *v1beta1.TaskRun) string {
	if run == nil {
		return "not found"
	}
	return outcome(run)
}

// first returns at most n elements of s.
func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// podsByRun returns the Pods in ns by the name of the TaskRun that controls
// them; Pods controlled by nothing are under "".
func podsByRun(ctx context.Context, c *cluster) (map[string][]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing Pods: %w", err)
	}
	byRun := map[string][]corev1.Pod{}
	for _, pod := range pods.Items {
		owner := ""
		if ref := metav1.GetControllerOf(&pod); ref != nil && ref.Kind == "TaskRun" {
			owner = ref.Name
		}
		byRun[owner] = append(byRun[owner], pod)
	}
	return byRun, nil
}

// podNames returns the names of pods, sorted.
func podNames(pods []corev1.Pod) []string {
	names := make([]string, len(pods))
	for i, pod := range pods {
		names[i] = pod.Name
	}
	slices.Sort(names)
	return names
}
