package conversion

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// testRunSemanticsThroughV1alpha1: through a real API server, a Task's
// results and a step's onError survive a v1alpha1 edit of its steps, and a
// run's retries, retryOn and TTL (0 apart from absent), results (an empty
// value apart from none) and attempts (their times exact) survive v1alpha1
// status writes: one that leaves the phase keeps the Retrying condition,
// one that sets phase Failed gets False/Failed and keeps the rest.
func testRunSemanticsThroughV1alpha1(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)

	task := withResults(&v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "image", Namespace: ns},
		Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{
			{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run", OnError: v1beta1.OnErrorContinue},
			{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
		}}}, digestResult)
	mustCreate(t, task)
	spokeTask := &v1alpha1.Task{}
	mustGet(t, client.ObjectKeyFromObject(task), spokeTask)
	spokeTask.Spec.Steps[0].Script = "golangci-lint run --fix"
	if err := env.Client.Update(ctx, spokeTask); err != nil {
		t.Fatalf("editing a step's script through v1alpha1: %v", err)
	}
	gotTask := &v1beta1.Task{}
	mustGet(t, client.ObjectKeyFromObject(task), gotTask)
	wantTask := task.Spec.DeepCopy()
	wantTask.Steps[0].Script = "golangci-lint run --fix"
	if diff := cmp.Diff(*wantTask, gotTask.Spec); diff != "" {
		t.Errorf("Task spec after a v1alpha1 step edit (-want +got):\n%s", diff)
	}

	run := withRunSemantics(&v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "image-1", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "image"}}},
		ptr.To[int32](0), []v1beta1.RetryReason{v1beta1.RetryOnPodFailed, v1beta1.RetryOnStepFailed}, ptr.To[int32](0))
	mustCreate(t, run)
	start := now()
	ended := metav1.NewTime(start.Add(30 * time.Second))
	retryingSince := metav1.NewTime(start.Add(31 * time.Second))
	run.Status = v1beta1.TaskRunStatus{
		PodName:   "image-1-pod-2",
		StartTime: &start,
		Conditions: []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionUnknown,
			Reason: string(v1beta1.ReasonRetrying), Message: "attempt 1 failed", LastTransitionTime: retryingSince}},
		Results: []v1beta1.RunResult{{Name: "digest", Value: ptr.To("")}},
		Attempts: []v1beta1.Attempt{{PodName: "image-1-pod", StartTime: &start, CompletionTime: &ended,
			Reason: string(v1beta1.RetryOnPodFailed), Message: `Pod "image-1-pod" was evicted`}},
	}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatalf("writing v1beta1 status: %v", err)
	}
	want := run.DeepCopy()

	// A v1alpha1 status write that leaves the phase (Pending) as it is.
	spoke := &v1alpha1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), spoke)
	if spoke.Status.Phase != v1alpha1.TaskRunPhasePending {
		t.Fatalf("v1alpha1 phase of a Retrying run = %q, want Pending", spoke.Status.Phase)
	}
	spoke.Status.PodName = "image-1-pod-2" // unchanged, but written
	if err := env.Client.Status().Update(ctx, spoke); err != nil {
		t.Fatalf("writing v1alpha1 status unchanged: %v", err)
	}
	got := &v1beta1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), got)
	if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after a v1alpha1 status write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after a v1alpha1 status write that left the phase (-want +got):\n%s", diff)
	}

	// A v1alpha1 status write that sets phase Failed.
	mustGet(t, client.ObjectKeyFromObject(run), spoke)
	finish := metav1.NewTime(start.Add(time.Minute))
	spoke.Status.Phase, spoke.Status.FinishTime = v1alpha1.TaskRunPhaseFailed, &finish
	if err := env.Client.Status().Update(ctx, spoke); err != nil {
		t.Fatalf("writing v1alpha1 phase Failed: %v", err)
	}
	mustGet(t, client.ObjectKeyFromObject(run), got)
	want.Status.CompletionTime = &finish
	want.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
		Reason: string(v1beta1.ReasonFailed), LastTransitionTime: finish}}
	if diff := cmp.Diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after a v1alpha1 writer set phase Failed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after a v1alpha1 writer set phase Failed (-want +got):\n%s", diff)
	}
	assertNoConversionAnnotation(t, got, gotTask)
}
