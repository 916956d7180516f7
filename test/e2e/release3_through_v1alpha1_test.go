//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds what the current release must do with objects that use
// release 3's fields once v1alpha1 clients, which cannot express any of
// them, write to those objects: keep every field in v1beta1, but the
// additions of a step that the writer renamed (API.md, Release 3,
// Conversion).

// The v1alpha1 Task writer's edits: a new script for one step, a new name
// for another.
const (
	r3EditedStep    = "fetch"
	r3EditedScript  = `git clone --depth 1 "$REPO" .`
	r3RenamedStep   = "compile"
	r3RenamedTo     = "build"
	r3UntouchedStep = "wait"
)

// writeRelease3FieldsThroughV1alpha1 creates, with the current manager, a
// Task and two runs that use every field release 3 added (r3BuildTask,
// r3BuildRun); one run succeeds, the other runs. Then three v1alpha1
// writers: kubectl applies a label to each object as a v1alpha1 manifest, a
// v1alpha1 client fails the running run through its status, and another
// changes one step's script and renames another step of the Task. Every new
// field must read the same through v1beta1 afterwards, but the additions of
// the renamed step: the steps the writer kept keep their env and the rest.
func (r *rehearsal) writeRelease3FieldsThroughV1alpha1() {
	t := r.t
	create(t, r.c, r3Dependencies()...)
	waitFor(t, 30*time.Second, "PersistentVolumeClaim "+r3Cache+" to be Bound", func(ctx context.Context) error {
		claim := &corev1.PersistentVolumeClaim{}
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r3Cache}, claim); err != nil {
			return err
		}
		if claim.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("phase %q", claim.Status.Phase)
		}
		return nil
	})
	create(t, r.c, r3BuildTask(), r3BuildRun(r3Done, 1), r3BuildRun(r3Long, 600))
	r.wantPods[r3Done], r.wantPods[r3Long] = []string{runstate.PodName(runNamed(r3Done))}, []string{runstate.PodName(runNamed(r3Long))}
	if got := waitFinished(t, r.c, time.Minute, r3Done); outcome(got[r3Done]) != "True/Succeeded" {
		t.Errorf("TaskRun %s, with every field of release 3, ended %s (%s), want True/Succeeded",
			r3Done, outcome(got[r3Done]), runstate.Summary(got[r3Done]))
	}
	waitFor(t, time.Minute, fmt.Sprintf("TaskRun %s to run its step %s", r3Long, r3UntouchedStep), func(ctx context.Context) error {
		run := &v1beta1.TaskRun{}
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r3Long}, run); err != nil {
			return err
		}
		if s := run.Status.Steps; len(s) != 3 || s[2].State != v1beta1.StepRunning {
			return fmt.Errorf("%s, steps %+v", betaOutcome(run), s)
		}
		return nil
	})
	taskBefore := r.getBetaTask(r3Task)
	runsBefore := map[string]*v1beta1.TaskRun{r3Done: r.getBetaRun(r3Done), r3Long: r.getBetaRun(r3Long)}
	r.checkRelease3FieldsAsCreated(taskBefore, runsBefore)

	const label = "release3-upgraded"
	r.applyLabelThroughV1alpha1(label, []string{r3Task}, []string{r3Done, r3Long})
	longBefore, finishTime := r.failThroughV1alpha1(r3Long)
	r.editStepsThroughV1alpha1(r3Task)

	task := r.getBetaTask(r3Task)
	want := taskBefore.Spec.DeepCopy()
	for i, step := range want.Steps {
		switch step.Name {
		case r3EditedStep:
			want.Steps[i].Script = r3EditedScript
		case r3RenamedStep:
			// A renamed step is a new step to conversion: the v1alpha1
			// writer gave it a name, an image and no script.
			want.Steps[i] = v1beta1.Step{Name: r3RenamedTo, Image: step.Image}
		}
	}
	if diff := cmp.Diff(*want, task.Spec); diff != "" {
		t.Errorf("v1beta1 spec of Task %s after v1alpha1 writers labelled it and edited its steps (-want +got):\n%s", r3Task, diff)
	}
	// Said again for the steps the writer kept, which the diff above
	// covers, because it is the promise users rely on: their env,
	// workingDir, resources and the rest stay.
	for _, name := range []string{r3EditedStep, r3UntouchedStep} {
		before, after := stepNamed(taskBefore, name), stepNamed(task, name)
		if before == nil || after == nil || len(before.Env) == 0 {
			t.Errorf("step %s of Task %s: %+v before the v1alpha1 writes, %+v after; want it with env in both", name, r3Task, before, after)
			continue
		}
		if diff := cmp.Diff(before.Env, after.Env); diff != "" {
			t.Errorf("env of step %s of Task %s, which a v1alpha1 writer kept (-before +after):\n%s", name, r3Task, diff)
		}
	}
	r.checkLabelledWithoutStash("Task", task.ObjectMeta, label)

	for name, before := range runsBefore {
		after := r.getBetaRun(name)
		if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
			t.Errorf("v1beta1 spec of TaskRun %s after writes through v1alpha1 (-before +after):\n%s", name, diff)
		}
		r.checkLabelledWithoutStash("TaskRun", after.ObjectMeta, label)
		if after.Labels["team"] != "shop" {
			t.Errorf("TaskRun %s has labels %v, want team=shop kept", name, after.Labels)
		}
		want := before.Status
		if name == r3Long {
			// As for release 2's fields: the v1alpha1 writer's phase wins,
			// the steps it cannot see are kept as it last read them.
			want = longBefore.Status
			want.Conditions = []metav1.Condition{{
				Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
				Reason: string(v1beta1.ReasonFailed), LastTransitionTime: finishTime,
			}}
			want.CompletionTime = &finishTime
		}
		if diff := cmp.Diff(want, after.Status); diff != "" {
			t.Errorf("v1beta1 status of TaskRun %s after writes through v1alpha1 (-want +got):\n%s", name, diff)
		}
	}
	r.release3Checked = true
}

// checkRelease3FieldsAsCreated checks that the objects read back through
// v1beta1 with every field release 3 added as they were created, so that
// the comparisons after the v1alpha1 writes start from all of them.
func (r *rehearsal) checkRelease3FieldsAsCreated(task *v1beta1.Task, runs map[string]*v1beta1.TaskRun) {
	if diff := cmp.Diff(r3BuildTask().Spec, task.Spec); diff != "" {
		r.t.Errorf("v1beta1 spec of Task %s as created (-want +got):\n%s", r3Task, diff)
	}
	for name, run := range runs {
		want := r3BuildRun(name, map[string]int{r3Done: 1, r3Long: 600}[name]).Spec
		if diff := cmp.Diff(want, run.Spec); diff != "" {
			r.t.Errorf("v1beta1 spec of TaskRun %s as created (-want +got):\n%s", name, diff)
		}
	}
}

// editStepsThroughV1alpha1 updates Task name as a v1alpha1 client would,
// from its v1alpha1 view: it gives step r3EditedStep a new script and
// renames step r3RenamedStep.
func (r *rehearsal) editStepsThroughV1alpha1(name string) {
	task := r.getAlphaTask(name)
	for i := range task.Spec.Steps {
		switch task.Spec.Steps[i].Name {
		case r3EditedStep:
			task.Spec.Steps[i].Script = r3EditedScript
		case r3RenamedStep:
			task.Spec.Steps[i].Name = r3RenamedTo
		}
	}
	if err := r.c.client.Update(context.Background(), task); err != nil {
		r.t.Fatalf("editing the steps of Task %s through v1alpha1: %v", name, err)
	}
}

// checkLabelledWithoutStash checks that an object read through v1beta1 has
// the label a v1alpha1 manifest applied, and not conversion's annotation,
// but for a run's pinned spec (status.taskSpec, from release 7), which only
// v1 says.
func (r *rehearsal) checkLabelledWithoutStash(kind string, meta metav1.ObjectMeta, label string) {
	if meta.Labels[label] != "true" {
		r.t.Errorf("%s %s has labels %v, want the one kubectl applied through v1alpha1", kind, meta.Name, meta.Labels)
	}
	if _, ok := withoutPinnedSpec(r.t, meta.Annotations)[conversionDataAnnotation]; ok {
		r.t.Errorf("the v1beta1 view of %s %s has annotation %s", kind, meta.Name, conversionDataAnnotation)
	}
}

// stepNamed returns task's step name, or nil.
func stepNamed(task *v1beta1.Task, name string) *v1beta1.Step {
	for i := range task.Spec.Steps {
		if task.Spec.Steps[i].Name == name {
			return &task.Spec.Steps[i]
		}
	}
	return nil
}
