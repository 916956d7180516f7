package conversion

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The fields issue 15 added (results, onError, retries, TTL, attempts) and
// the reasons it added to the Succeeded condition, through conversion.

var (
	digestResult = v1beta1.ResultDeclaration{Name: "digest", Description: "The image digest"}
	evicted      = v1beta1.Attempt{PodName: "nightly-pod", StartTime: &started, CompletionTime: &finished,
		Reason: string(v1beta1.RetryOnPodFailed), Message: `Pod "nightly-pod" was evicted: the node was low on memory`}
	// evictedStash is evicted as the stash holds it: times to the second, in UTC.
	evictedStash = `{"podName":"nightly-pod","startTime":"2024-05-01T10:01:00Z","completionTime":"2024-05-01T10:06:00Z",` +
		`"reason":"PodFailed","message":"Pod \"nightly-pod\" was evicted: the node was low on memory"}`
)

// withResults sets a hub Task's results.
func withResults(task *v1beta1.Task, results ...v1beta1.ResultDeclaration) *v1beta1.Task {
	task.Spec.Results = results
	return task
}

// withRunSemantics sets a hub run's retries, retryOn and TTL.
func withRunSemantics(run *v1beta1.TaskRun, retries *int32, retryOn []v1beta1.RetryReason, ttl *int32) *v1beta1.TaskRun {
	run.Spec.Retries, run.Spec.RetryOn, run.Spec.TTLSecondsAfterFinished = retries, retryOn, ttl
	return run
}

// withOutcome sets a hub run's results and attempts.
func withOutcome(run *v1beta1.TaskRun, results []v1beta1.RunResult, attempts ...v1beta1.Attempt) *v1beta1.TaskRun {
	run.Status.Results, run.Status.Attempts = results, attempts
	return run
}

// TestTaskRunSemanticsFields: each Task field issue 15 added rides in the
// stash at its v1beta1 path (onError with the step's other additions, by
// name) and comes back from it. Both ways, as TestTaskRunRelease3Fields.
func TestTaskRunSemanticsFields(t *testing.T) {
	vetStep := v1beta1.Step{Name: "vet", Image: "golang:1.26", Script: "go vet ./..."}
	continueStep := v1beta1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run", OnError: v1beta1.OnErrorContinue}
	testContinues := testStepWithEnv
	testContinues.OnError = v1beta1.OnErrorContinue
	tests := map[string]struct {
		hub   *v1beta1.Task
		spoke *v1alpha1.Task
	}{
		"results, in order": {
			hub: withResults(hubTask().Obj(), digestResult, v1beta1.ResultDeclaration{Name: "url"}),
			spoke: spokeTask().Annotation(stashed(
				`{"spec":{"results":[{"name":"digest","description":"The image digest"},{"name":"url"}]}}`)).Obj(),
		},
		"an empty results list is not stashed": {
			hub:   withResults(hubTask().Obj(), []v1beta1.ResultDeclaration{}...),
			spoke: spokeTask().Obj(),
		},
		"onError is stashed by step name, alone or beside other additions": {
			hub: hubTask().Steps(vetStep, continueStep, testContinues,
				v1beta1.Step{Name: "build", Image: "golang:1.26", OnError: v1beta1.OnErrorStopAndFail}).Obj(),
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "vet", Image: "golang:1.26", Script: "go vet ./..."},
				v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"},
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."},
				v1alpha1.Step{Name: "build", Image: "golang:1.26"},
			).Annotation(stashed(`{"spec":{"steps":[{"name":"lint","onError":"continue"},` +
				`{"name":"test","env":[{"name":"CGO_ENABLED","value":"0"}],"onError":"continue"},` +
				`{"name":"build","onError":"stopAndFail"}]}}`)).Obj(),
		},
		"results share the annotation with release 2's and 3's fields": {
			hub: withResults(hubTask().Description("d").Workspace("source").Steps(continueStep).Obj(), digestResult),
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"}).
				Annotation(stashed(`{"spec":{"description":"d","workspaces":[{"name":"source"}],` +
					`"steps":[{"name":"lint","onError":"continue"}],"results":[{"name":"digest","description":"The image digest"}]}}`)).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkFromHub(t, ConvertBetaTaskToAlpha, tc.hub, tc.spoke)
			want := tc.hub
			if len(want.Spec.Results) == 0 {
				want.Spec.Results = nil // empty is absent on the wire
			}
			checkToHub(t, ConvertAlphaTaskToBeta, tc.spoke, want)
		})
	}
}

// TestTaskRunRunSemanticsFields: each TaskRun field issue 15 added rides in
// the stash at its v1beta1 path and comes back from it, 0 apart from
// absent and an empty result value apart from none; the new reasons give
// their phases. Both ways: the hub converts to the spoke with its stash,
// and that spoke converts back to the hub.
func TestTaskRunRunSemanticsFields(t *testing.T) {
	retrying := succeeded(metav1.ConditionUnknown, v1beta1.ReasonRetrying, finished)
	retrying.Message = `attempt 1 failed: Pod "nightly-pod" was evicted`
	tooLarge := succeeded(metav1.ConditionFalse, v1beta1.ReasonResultsTooLarge, later)
	tooLarge.Message = `step "build" wrote 4097 bytes of results, over 4096`
	pullFailed := succeeded(metav1.ConditionFalse, v1beta1.ReasonImagePullFailed, later)
	pullFailed.Message = `step "build": image "golang:1.99" could not be pulled for 5m0s: ErrImagePull`

	tests := map[string]struct {
		hub   *v1beta1.TaskRun
		spoke *v1alpha1.TaskRun
	}{
		"retries 0 survives, apart from absent": {
			hub:   withRunSemantics(hubRun().Obj(), ptr.To[int32](0), nil, nil),
			spoke: spokeRun().Annotation(stashed(`{"spec":{"retries":0}}`)).Obj(),
		},
		"retries, retryOn in its order, and a TTL": {
			hub: withRunSemantics(hubRun().Obj(), ptr.To[int32](3),
				[]v1beta1.RetryReason{v1beta1.RetryOnStepFailed, v1beta1.RetryOnPodFailed}, ptr.To[int32](86400)),
			spoke: spokeRun().Annotation(stashed(`{"spec":{"retries":3,"retryOn":["StepFailed","PodFailed"],"ttlSecondsAfterFinished":86400}}`)).Obj(),
		},
		"ttlSecondsAfterFinished 0 survives, apart from absent": {
			hub:   withRunSemantics(hubRun().Obj(), nil, nil, ptr.To[int32](0)),
			spoke: spokeRun().Annotation(stashed(`{"spec":{"ttlSecondsAfterFinished":0}}`)).Obj(),
		},
		"results in order, an empty value kept as empty": {
			hub: withOutcome(hubRun().Started(started).Completed(finished).
				Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)).Obj(),
				[]v1beta1.RunResult{{Name: "digest", Value: ptr.To("sha256:0f6a")}, {Name: "url", Value: ptr.To("")}}),
			spoke: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseSucceeded).
				Annotation(stashed(`{"status":{"results":[{"name":"digest","value":"sha256:0f6a"},{"name":"url","value":""}]}}`)).Obj(),
		},
		"attempts keep their times to the second": {
			hub: withOutcome(hubRun().PodName("nightly-pod-2").Started(started).
				Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(), nil, evicted),
			spoke: spokeRun().PodName("nightly-pod-2").Started(started).Phase(v1alpha1.TaskRunPhaseRunning).
				Annotation(stashed(`{"status":{"attempts":[` + evictedStash + `]}}`)).Obj(),
		},
		"Unknown Retrying: Pending, the condition and attempts stashed": {
			hub: withOutcome(withRunSemantics(hubRun().Started(started).Conditions(retrying).Obj(), ptr.To[int32](2), nil, nil), nil, evicted),
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhasePending).
				Annotation(stashed(`{"spec":{"retries":2},"status":{"conditions":[{"type":"Succeeded","status":"Unknown",` +
					`"lastTransitionTime":"2024-05-01T10:06:00Z","reason":"Retrying","message":"attempt 1 failed: Pod \"nightly-pod\" was evicted"}],` +
					`"attempts":[` + evictedStash + `]}}`)).Obj(),
		},
		"False ResultsTooLarge: Failed, the condition stashed": {
			hub: hubRun().Started(started).Completed(later).Conditions(tooLarge).Obj(),
			spoke: spokeRun().Started(started).Finished(later).Phase(v1alpha1.TaskRunPhaseFailed).
				Annotation(stashed(stashedConditions(tooLarge))).Obj(),
		},
		"False ImagePullFailed: Failed, the condition stashed": {
			hub: hubRun().Started(started).Completed(later).Conditions(pullFailed).Obj(),
			spoke: spokeRun().Started(started).Finished(later).Phase(v1alpha1.TaskRunPhaseFailed).
				Annotation(stashed(stashedConditions(pullFailed))).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkFromHub(t, ConvertBetaTaskRunToAlpha, tc.hub, tc.spoke)
			checkToHub(t, ConvertAlphaTaskRunToBeta, throughJSON(t, tc.spoke), tc.hub)
		})
	}
}

// TestV1alpha1WritersKeepRunSemantics: what a v1alpha1 writer does to a run
// that has issue 15's fields. The spoke wins where it speaks (the phase,
// the times); what rides in the stash comes back whatever it did.
func TestV1alpha1WritersKeepRunSemantics(t *testing.T) {
	retrying := succeeded(metav1.ConditionUnknown, v1beta1.ReasonRetrying, finished)
	retrying.Message = "attempt 1 failed"
	running := succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)
	running.Message = `running step "build" (1 of 1)`
	results := []v1beta1.RunResult{{Name: "digest", Value: ptr.To("")}}
	outcome := `"results":[{"name":"digest","value":""}],"attempts":[` + evictedStash + `]`

	tests := map[string]struct {
		spoke *v1alpha1.TaskRun
		want  *v1beta1.TaskRun
	}{
		"a writer that leaves the phase Pending keeps the stored Retrying condition": {
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhasePending).
				Annotation(stashed(`{"status":{"conditions":` + conditionsJSON(retrying) + `,` + outcome + `}}`)).Obj(),
			want: withOutcome(hubRun().Started(started).Conditions(retrying).Obj(), results, evicted),
		},
		"a writer that sets phase Failed gets False/Failed and keeps results and attempts": {
			spoke: spokeRun().PodName("nightly-pod-2").Started(started).Finished(later).Phase(v1alpha1.TaskRunPhaseFailed).
				Annotation(stashed(`{"status":{"conditions":` + conditionsJSON(running) + `,` + outcome + `}}`)).Obj(),
			want: withOutcome(hubRun().PodName("nightly-pod-2").Started(started).Completed(later).
				Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, later)).Obj(), results, evicted),
		},
		"a writer that moves Retrying to Running gets Unknown/Running, spec kept": {
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).
				Annotation(stashed(`{"spec":{"retries":0,"retryOn":["PodFailed"],"ttlSecondsAfterFinished":0},` +
					`"status":{"conditions":` + conditionsJSON(retrying) + `}}`)).Obj(),
			want: withRunSemantics(hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(),
				ptr.To[int32](0), []v1beta1.RetryReason{v1beta1.RetryOnPodFailed}, ptr.To[int32](0)),
		},
		"a stash whose retries is no number is ignored whole": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"retries":"3","ttlSecondsAfterFinished":60}}`)).Obj(),
			want:  hubRun().Obj(),
		},
		"a stash whose attempt time is no time is ignored whole": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"retries":1},"status":{"attempts":[{"podName":"p","reason":"PodFailed","startTime":"soon"}]}}`)).Obj(),
			want:  hubRun().Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskRunToBeta, tc.spoke, tc.want)
		})
	}
}

// TestStepOnErrorFollowsItsName: a v1alpha1 writer that reorders steps keeps
// each step's onError; one that renames a step drops it.
func TestStepOnErrorFollowsItsName(t *testing.T) {
	key, value := stashed(`{"spec":{"steps":[{"name":"lint","onError":"continue"}]}}`)
	lint := v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"}
	tests := map[string]struct {
		spoke *v1alpha1.Task
		want  []v1beta1.Step
	}{
		"reordered": {
			spoke: spokeTask().Steps(lint, v1alpha1.Step{Name: "build", Image: "golang:1.26"}).Annotation(key, value).Obj(),
			want: []v1beta1.Step{{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run", OnError: v1beta1.OnErrorContinue},
				{Name: "build", Image: "golang:1.26"}},
		},
		"renamed": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "golangci", Image: lint.Image, Script: lint.Script}).Annotation(key, value).Obj(),
			want:  []v1beta1.Step{{Name: "golangci", Image: "golangci/golangci-lint", Script: "golangci-lint run"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := &v1beta1.Task{}
			if err := ConvertAlphaTaskToBeta(t.Context(), tc.spoke, got); err != nil {
				t.Fatalf("ConvertAlphaTaskToBeta() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Spec.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}
