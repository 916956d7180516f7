package stashguard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The guard's tests of the fields issue 15 added (results, onError,
// retries, retryOn, ttlSecondsAfterFinished, status results and attempts),
// run by TestThroughAPIServer.

// testRunSemanticsWrites: small v1beta1 writes of issue 15's fields skip the
// guard; status writes of any size never reach it, and a run whose status
// took it past the limit still takes writes to its main resource; a Task
// whose result descriptions would take its stash past the limit is refused
// with the size.
func testRunSemanticsWrites(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "image", Namespace: ns}, Spec: v1beta1.TaskSpec{
		Results: []v1beta1.ResultDeclaration{{Name: "digest", Description: "The image digest"}},
		Steps: []v1beta1.Step{{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run", OnError: v1beta1.OnErrorContinue},
			{Name: "build", Image: "golang:1.26", Script: "go build ./...", OnError: v1beta1.OnErrorStopAndFail}}}}
	run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "image-1", Namespace: ns}, Spec: v1beta1.TaskRunSpec{
		TaskRef: v1beta1.TaskRef{Name: "image"}, Retries: ptr.To[int32](0),
		RetryOn: []v1beta1.RetryReason{v1beta1.RetryOnPodFailed, v1beta1.RetryOnStepFailed}, TTLSecondsAfterFinished: ptr.To[int32](0)}}
	before := guardCalls(t)
	create(t, task, run)
	task.Labels = map[string]string{"touched": "v1beta1"}
	if err := env.Client.Update(ctx, task); err != nil {
		t.Fatalf("updating the Task: %v", err)
	}
	if calls := guardCalls(t) - before; calls != 0 {
		t.Errorf("small writes of a Task with results and onError, and a run with retries, retryOn and a TTL, made %v calls to the guards, want none", calls)
	}

	// The CRD's most attempts, each with the longest message: 320 KiB of
	// stash. (Text that JSON escapes would make the object itself too large
	// for etcd.)
	before = guardCalls(t)
	for i := range 10 {
		run.Status.Attempts = append(run.Status.Attempts, v1beta1.Attempt{PodName: fmt.Sprintf("image-1-pod-%d", i),
			Reason: string(v1beta1.RetryOnPodFailed), Message: strings.Repeat("a", 32<<10)})
	}
	run.Status.Results = []v1beta1.RunResult{{Name: "digest", Value: ptr.To(strings.Repeat("a", 4096))}}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatalf("a status write that takes the stash past the limit: %.500v", err)
	}
	if calls := guardCalls(t) - before; calls != 0 {
		t.Errorf("a v1beta1 status write made %v calls to the guards, want none", calls)
	}
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "image-1", spoke)
	if spoke.Annotations[conversion.AnnotationConversionDataOmitted] != "true" {
		t.Errorf("the v1alpha1 form of a run with 320 KiB of attempts carries no omission marker: %.200v", spoke.Annotations)
	}
	run.Labels = map[string]string{"touched": "v1beta1"}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Errorf("a v1beta1 write to the main resource of a run already past the limit: %.500v", err)
	}

	big := task.DeepCopy()
	big.ObjectMeta = metav1.ObjectMeta{Name: "big", Namespace: ns}
	big.Spec.Results = nil
	for i := range 16 {
		big.Spec.Results = append(big.Spec.Results, v1beta1.ResultDeclaration{Name: fmt.Sprintf("r%02d", i), Description: strings.Repeat("<", 4096)})
	}
	checkInvalid(t, env.Client.Create(ctx, big), "metadata.annotations: Invalid value: read through minitask.dev/v1alpha1", "more than the API server's limit of 262144")
}

// testForgedRunSemanticsStash: a stash that sets one of issue 15's fields to
// what v1beta1 refuses is refused on a v1alpha1 write; on an update, the
// run's new spec fields are immutable; and a write to the main resource
// cannot set status (results, attempts) through the stash.
func testForgedRunSemanticsStash(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	// The onError cases' step has no script; the results case keeps it, as
	// a Task with results must end with a script step (the Task webhook).
	withoutScript := func(t *v1alpha1.Task) *v1alpha1.Task { t.Spec.Steps[0].Script = ""; return t }
	for name, tc := range map[string]struct {
		obj  client.Object
		want []string
	}{
		"onError continue on a step without a script": {
			obj:  withoutScript(forgedTask(ns, "continue", `{"v1beta1":{"spec":{"steps":[{"name":"build","onError":"continue"}]}}}`)),
			want: []string{"spec.steps[0].onError", "onError: continue needs a script"},
		},
		"an onError outside the enum": {
			obj:  withoutScript(forgedTask(ns, "sometimes", `{"v1beta1":{"spec":{"steps":[{"name":"build","onError":"sometimes"}]}}}`)),
			want: []string{`spec.steps[0].onError: Unsupported value: "sometimes"`},
		},
		"two results of one name": {
			obj:  forgedTask(ns, "results-twice", `{"v1beta1":{"spec":{"results":[{"name":"digest"},{"name":"digest"}]}}}`),
			want: []string{`spec.results[1]: Duplicate value`},
		},
		"more retries than allowed": {
			obj:  forgedRun(ns, "retries", `{"v1beta1":{"spec":{"retries":11}}}`),
			want: []string{"spec.retries: Invalid value: 11"},
		},
		"a retry reason outside the enum": {
			obj:  forgedRun(ns, "retry-on", `{"v1beta1":{"spec":{"retryOn":["Always"]}}}`),
			want: []string{`spec.retryOn[0]: Unsupported value: "Always"`},
		},
		"a negative TTL": {
			obj:  forgedRun(ns, "ttl", `{"v1beta1":{"spec":{"ttlSecondsAfterFinished":-1}}}`),
			want: []string{"spec.ttlSecondsAfterFinished: Invalid value: -1"},
		},
		"status results on a create": {
			obj:  forgedRun(ns, "create-results", `{"v1beta1":{"status":{"results":[{"name":"digest","value":"sha256:forged"}]}}}`),
			want: []string{"metadata.annotations[minitask.dev/conversion-data]: Forbidden: it would change this TaskRun's status"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			checkInvalid(t, env.Client.Create(ctx, tc.obj), tc.want...)
		})
	}

	create(t, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Retries: ptr.To[int32](0)}})
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "r", spoke)
	honest := spoke.DeepCopy()
	metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, conversion.AnnotationConversionData,
		`{"v1beta1":{"spec":{"retries":3,"retryOn":["StepFailed"],"ttlSecondsAfterFinished":60}}}`)
	checkInvalid(t, env.Client.Update(ctx, spoke), "retries is immutable", "retryOn is immutable", "ttlSecondsAfterFinished is immutable")

	forged := honest.DeepCopy()
	metav1.SetMetaDataAnnotation(&forged.ObjectMeta, conversion.AnnotationConversionData,
		`{"v1beta1":{"spec":{"retries":0},"status":{"results":[{"name":"digest","value":"sha256:forged"}],"attempts":[{"podName":"p","reason":"PodFailed"}]}}}`)
	checkInvalid(t, env.Client.Update(ctx, forged),
		"metadata.annotations[minitask.dev/conversion-data]: Forbidden: it would change this TaskRun's status, which only a write to the status subresource may")
	// Through the status subresource, the API server keeps the stored
	// metadata, stash included: the forged results are not stored either.
	forged = honest.DeepCopy()
	metav1.SetMetaDataAnnotation(&forged.ObjectMeta, conversion.AnnotationConversionData,
		`{"v1beta1":{"spec":{"retries":0},"status":{"results":[{"name":"digest","value":"sha256:forged"}]}}}`)
	forged.Status.Phase = v1alpha1.TaskRunPhaseFailed
	if err := env.Client.Status().Update(ctx, forged); err != nil {
		t.Fatalf("a v1alpha1 status write: %v", err)
	}
	got := &v1beta1.TaskRun{}
	get(t, ns, "r", got)
	if got.Status.Results != nil || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Reason != string(v1beta1.ReasonFailed) {
		t.Errorf("after a v1alpha1 status write of phase Failed with a forged stash: results %v, conditions %v; want no results, False/Failed",
			got.Status.Results, got.Status.Conditions)
	}
	// And the honest writer, which writes back the stash it read, is let through.
	get(t, ns, "r", honest)
	honest.Labels = map[string]string{"touched": "v1alpha1"}
	if err := env.Client.Update(ctx, honest); err != nil {
		t.Errorf("a v1alpha1 write that leaves the stash as read: %v", err)
	}
}
