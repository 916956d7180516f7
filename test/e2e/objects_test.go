//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
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

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what every test uses: polling, and the run and Pod
// queries the assertions share. Tests build their objects with
// internal/testing/wrappers, and read runs through internal/runstate, as the
// controller does. A step's script runs in alpine:3: in the local cluster,
// `sleep N` makes it run N seconds and a final `exit N` makes it exit with N
// (see docs/local-cluster.md); anything else runs 1 second and exits 0.

// runNamed is a v1beta1 TaskRun in ns with only its name, for runstate's
// names (runstate.PodName) of a run the test has not at hand.
func runNamed(name string) *v1.TaskRun {
	return &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
}

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

// outcome is a run's condition as status/reason, e.g. True/Succeeded, for
// messages and comparisons.
func outcome(run *v1.TaskRun) string {
	return conditionOutcome(runstate.Succeeded(run))
}

// betaOutcome is outcome of a run read through v1beta1, deprecated but
// still served, as tests of its clients read runs.
func betaOutcome(run *v1beta1.TaskRun) string {
	return conditionOutcome(meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded))
}

// betaFinished reports whether a run read through v1beta1 has finished.
func betaFinished(run *v1beta1.TaskRun) bool {
	cond := meta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded)
	return cond != nil && cond.Status != metav1.ConditionUnknown
}

// conditionOutcome is a Succeeded condition as status/reason.
func conditionOutcome(cond *metav1.Condition) string {
	if cond == nil {
		return "(no condition)"
	}
	return string(cond.Status) + "/" + cond.Reason
}

// runs returns the TaskRuns in ns by name, read through v1beta1, which
// every release a test runs serves (v1 only from release 5: the
// rehearsals run releases 2 and 4), in v1's types for the checks: their
// status and metadata are the same in both, and v1 reads a v1beta1 param's
// string value as a string. Only spec.timeout has no place there.
func runs(ctx context.Context, c *cluster) (map[string]*v1.TaskRun, error) {
	var list v1beta1.TaskRunList
	if err := c.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing v1beta1 TaskRuns: %w", err)
	}
	byName := make(map[string]*v1.TaskRun, len(list.Items))
	for i := range list.Items {
		data, err := json.Marshal(&list.Items[i])
		if err != nil {
			return nil, err
		}
		run := &v1.TaskRun{}
		if err := json.Unmarshal(data, run); err != nil {
			return nil, fmt.Errorf("reading v1beta1 TaskRun %s as v1: %w", list.Items[i].Name, err)
		}
		byName[run.Name] = run
	}
	return byName, nil
}

// waitFinished waits until the named runs have finished and returns them.
func waitFinished(t testing.TB, c *cluster, timeout time.Duration, names ...string) map[string]*v1.TaskRun {
	t.Helper()
	var got map[string]*v1.TaskRun
	waitFor(t, timeout, fmt.Sprintf("%d TaskRuns to finish", len(names)), func(ctx context.Context) error {
		all, err := runs(ctx, c)
		if err != nil {
			return err
		}
		var pending []string
		for _, name := range names {
			if run, ok := all[name]; !ok || !runstate.Finished(run) {
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

func describe(run *v1.TaskRun) string {
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
