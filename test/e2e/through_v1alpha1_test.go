//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file holds what the current release must do with objects written
// through v1beta1 once it has taken over from an earlier one: keep every
// v1beta1 field through writes made through v1alpha1.

// The objects created through v1beta1 after the upgrade.
const (
	runAlice = "greet-alice" // params, a timeout; succeeds
	runBob   = "greet-bob"   // cancelled at creation; never gets a Pod
	runCarol = "greet-carol" // runs for long; a v1alpha1 writer fails it
)

// greetTask is a Task with what v1alpha1 cannot express: a description, and
// params, one of them with no default, that its steps use; its second step
// sleeps $(params.pause) seconds.
func greetTask(name string) *v1beta1.Task {
	task := wrappers.V1beta1Task(wrappers.Task(ns, name).
		Step("say", "alpine:3", `echo "$(params.greeting), $(params.name)!"`).
		Step("wait", "alpine:3", "sleep $(params.pause)").Obj())
	task.Spec.Description = "Greets someone"
	task.Spec.Params = []v1beta1.ParamSpec{
		{Name: "greeting", Description: "What to say", Default: ptr.To("hello")},
		{Name: "name", Description: "Whom to greet"},
		{Name: "pause", Default: ptr.To("1")},
	}
	return task
}

// writeV1beta1ObjectsThroughV1alpha1 creates v1beta1 objects with what
// v1alpha1 cannot express (params, a timeout, a cancel request, the steps'
// states), then writes to them through v1alpha1: kubectl applies a label to
// each, and a v1alpha1 client fails a running run through its status. The
// v1beta1 fields must survive both.
func (r *rehearsal) writeV1beta1ObjectsThroughV1alpha1() {
	t := r.t
	create(t, r.c, greetTask("greet"),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, runAlice, "greet").Param("name", "alice").Param("greeting", "hi").Timeout(10*time.Minute).Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, runBob, "greet").Param("name", "bob").Param("pause", "600").Timeout(5*time.Minute).Cancelled().Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, runCarol, "greet").Param("name", "carol").Param("pause", "600").Timeout(10*time.Minute).Obj()))
	// Bob was cancelled before his run had a Pod.
	r.wantPods[runAlice], r.wantPods[runCarol] = []string{runstate.PodName(runNamed(runAlice))}, []string{runstate.PodName(runNamed(runCarol))}
	waitFinished(t, r.c, time.Minute, runAlice, runBob)
	waitFor(t, time.Minute, fmt.Sprintf("TaskRun %s to run its step wait", runCarol), func(ctx context.Context) error {
		run := &v1beta1.TaskRun{}
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runCarol}, run); err != nil {
			return err
		}
		if s := run.Status.Steps; len(s) != 2 || s[1].State != v1beta1.StepRunning {
			return fmt.Errorf("%s, steps %+v", betaOutcome(run), s)
		}
		return nil
	})
	r.betaTasks = map[string]*v1beta1.Task{"greet": r.getBetaTask("greet")}
	r.betaRuns = map[string]*v1beta1.TaskRun{}
	for _, name := range []string{runAlice, runBob, runCarol} {
		r.betaRuns[name] = r.getBetaRun(name)
	}

	r.applyLabelThroughV1alpha1("upgraded", slices.Sorted(maps.Keys(r.betaTasks)), slices.Sorted(maps.Keys(r.betaRuns)))
	carolBefore, finishTime := r.failThroughV1alpha1(runCarol)

	const label = "upgraded"
	for name, before := range r.betaTasks {
		after := r.getBetaTask(name)
		if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
			t.Errorf("v1beta1 spec of Task %s after kubectl applied a label through v1alpha1 (-before +after):\n%s", name, diff)
		}
		if after.Labels[label] != "true" {
			t.Errorf("Task %s has labels %v, want the one kubectl applied", name, after.Labels)
		}
		if _, ok := after.Annotations[conversionDataAnnotation]; ok {
			t.Errorf("the v1beta1 view of Task %s has annotation %s", name, conversionDataAnnotation)
		}
	}
	for name, before := range r.betaRuns {
		after := r.getBetaRun(name)
		if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
			t.Errorf("v1beta1 spec of TaskRun %s after writes through v1alpha1 (-before +after):\n%s", name, diff)
		}
		if after.Labels[label] != "true" {
			t.Errorf("TaskRun %s has labels %v, want the one kubectl applied", name, after.Labels)
		}
		// But for the spec a run that started from release 7 on pinned
		// (status.taskSpec, only v1 says it).
		if _, ok := withoutPinnedSpec(t, after.Annotations)[conversionDataAnnotation]; ok {
			t.Errorf("the v1beta1 view of TaskRun %s has annotation %s: %s", name, conversionDataAnnotation, after.Annotations[conversionDataAnnotation])
		}
		want := before.Status
		if name == runCarol {
			// The v1alpha1 writer's phase wins and becomes False/Failed,
			// its finishTime the completionTime; the steps it cannot see
			// are kept as they were when it wrote.
			want = carolBefore.Status
			want.Conditions = []metav1.Condition{{
				Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
				Reason: string(v1beta1.ReasonFailed), LastTransitionTime: finishTime,
			}}
			want.CompletionTime = &finishTime
		}
		if diff := cmp.Diff(want, after.Status); diff != "" {
			t.Errorf("v1beta1 status of TaskRun %s after writes through v1alpha1 (-want +got):\n%s", name, diff)
		}
		r.betaRuns[name] = after
	}
}

// applyLabelThroughV1alpha1 applies, with kubectl, a v1alpha1 manifest of
// each named Task and TaskRun that adds label (set to "true"): what a user
// of the first release would do with the manifests they kept.
func (r *rehearsal) applyLabelThroughV1alpha1(label string, tasks, runs []string) {
	t := r.t
	var docs []string
	manifest := func(kind string, meta metav1.ObjectMeta, spec any) {
		labels := maps.Clone(meta.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[label] = "true"
		b, err := yaml.Marshal(map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
			"metadata": map[string]any{"name": meta.Name, "namespace": meta.Namespace, "labels": labels},
			"spec":     spec,
		})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, name := range tasks {
		task := r.getAlphaTask(name)
		manifest("Task", task.ObjectMeta, task.Spec)
	}
	for _, name := range runs {
		run := r.getAlphaRun(name)
		manifest("TaskRun", run.ObjectMeta, run.Spec)
	}
	path := filepath.Join(t.TempDir(), "v1alpha1.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r.kubectl("apply", "-f", path)
}

// failThroughV1alpha1 fails a running run as a v1alpha1 client would: it
// writes phase Failed and a finishTime to the v1alpha1 status. It returns
// the v1beta1 view of the run that the write was based on, and the
// finishTime written.
func (r *rehearsal) failThroughV1alpha1(name string) (*v1beta1.TaskRun, metav1.Time) {
	t, ctx := r.t, context.Background()
	for range 10 {
		// The controller may write the run in between; the status update
		// carries the resourceVersion, so a write based on an older view
		// fails and is retried.
		beta, alpha := r.getBetaRun(name), r.getAlphaRun(name)
		if beta.ResourceVersion != alpha.ResourceVersion {
			continue
		}
		finishTime := metav1.NewTime(time.Now().Truncate(time.Second))
		alpha.Status.Phase, alpha.Status.FinishTime = v1alpha1.TaskRunPhaseFailed, &finishTime
		err := r.c.client.Status().Update(ctx, alpha)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("writing phase Failed to TaskRun %s through v1alpha1: %v", name, err)
		}
		return beta, finishTime
	}
	t.Fatalf("writing phase Failed to TaskRun %s through v1alpha1: it kept changing", name)
	return nil, metav1.Time{}
}

// checkPods checks that every run has the one Pod it should: the Pods the
