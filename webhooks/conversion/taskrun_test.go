package conversion

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

var (
	readyCondition = metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "PodReady", LastTransitionTime: started}
	buildStep      = v1beta1.StepState{Name: "build", State: v1beta1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: &started, FinishedAt: &finished}
)

func TestConvertTaskRunFromHub(t *testing.T) {
	stepFailed := succeeded(metav1.ConditionFalse, v1beta1.ReasonStepFailed, finished)
	stepFailed.Message = `step "build" exited with code 2`
	succeededWithMessage := succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)
	succeededWithMessage.Message = "all 1 steps passed"
	observedRunning := succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)
	observedRunning.ObservedGeneration = 3

	tests := map[string]struct {
		hub  *v1beta1.TaskRun
		want *v1alpha1.TaskRun
	}{
		"no spec and no status": {
			hub:  hubRun().TaskRef("").Obj(),
			want: spokeRun().TaskRef("").Obj(),
		},
		"every field maps, so no annotation": {
			hub: hubRun().PodName("nightly-pod").Started(started).Completed(finished).
				Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)).Obj(),
			want: spokeRun().PodName("nightly-pod").Started(started).Finished(finished).
				Phase(v1alpha1.TaskRunPhaseSucceeded).Obj(),
		},
		"taskRef.name becomes taskRef": {
			hub:  hubRun().TaskRef("other").Obj(),
			want: spokeRun().TaskRef("other").Obj(),
		},
		"completionTime becomes finishTime": {
			hub:  hubRun().Completed(finished).Obj(),
			want: spokeRun().Finished(finished).Obj(),
		},
		"no condition: empty phase": {
			hub:  hubRun().Started(started).Obj(),
			want: spokeRun().Started(started).Obj(),
		},
		"Unknown Pending: Pending": {
			hub:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonPending, started)).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhasePending).Obj(),
		},
		"Unknown Pending since creation: Pending": {
			hub:  hubRun().Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonPending, created)).Obj(),
			want: spokeRun().Phase(v1alpha1.TaskRunPhasePending).Obj(),
		},
		"Unknown WaitingForTask: Pending, and the condition is stashed": {
			hub: hubRun().Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask, created)).Obj(),
			want: spokeRun().Phase(v1alpha1.TaskRunPhasePending).
				Annotation(stashed(`{"status":{"conditions":[{"type":"Succeeded","status":"Unknown","lastTransitionTime":"2024-05-01T10:00:00Z","reason":"WaitingForTask","message":""}]}}`)).Obj(),
		},
		"Unknown Running: Running": {
			hub:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).Obj(),
		},
		"True Succeeded: Succeeded": {
			hub:  hubRun().Started(started).Completed(finished).Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)).Obj(),
			want: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseSucceeded).Obj(),
		},
		"False StepFailed: Failed, and the condition is stashed": {
			hub:  hubRun().Started(started).Completed(finished).Conditions(stepFailed).Obj(),
			want: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(stepFailed))).Obj(),
		},
		"False TaskRunTimeout: Failed, and the condition is stashed": {
			hub:  hubRun().Completed(finished).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonTimeout, finished)).Obj(),
			want: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonTimeout, finished)))).Obj(),
		},
		"False TaskRunCancelled: Failed, and the condition is stashed": {
			hub:  hubRun().Completed(finished).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonCancelled, finished)).Obj(),
			want: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonCancelled, finished)))).Obj(),
		},
		"False InvalidParams: Failed, and the condition is stashed": {
			hub:  hubRun().Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonInvalidParams, created)).Obj(),
			want: spokeRun().Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonInvalidParams, created)))).Obj(),
		},
		"False PodFailed: Failed, and the condition is stashed": {
			hub:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonPodFailed, started)).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonPodFailed, started)))).Obj(),
		},
		"False Failed at finishTime: Failed": {
			hub:  hubRun().Started(started).Completed(finished).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, finished)).Obj(),
			want: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Obj(),
		},
		"a lastTransitionTime other than the derived one is stashed": {
			hub:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, later)).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).Annotation(stashed(stashedConditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, later)))).Obj(),
		},
		"a message is stashed": {
			hub:  hubRun().Completed(finished).Conditions(succeededWithMessage).Obj(),
			want: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseSucceeded).Annotation(stashed(stashedConditions(succeededWithMessage))).Obj(),
		},
		"an observedGeneration is stashed": {
			hub:  hubRun().Started(started).Conditions(observedRunning).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).Annotation(stashed(stashedConditions(observedRunning))).Obj(),
		},
		"another condition type is stashed, with the whole list in order": {
			hub: hubRun().Started(started).Conditions(readyCondition, succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(),
			want: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).
				Annotation(stashed(stashedConditions(readyCondition, succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)))).Obj(),
		},
		"only another condition type: empty phase, the list is stashed": {
			hub:  hubRun().Conditions(readyCondition).Obj(),
			want: spokeRun().Annotation(stashed(stashedConditions(readyCondition))).Obj(),
		},
		"spec.params are stashed": {
			hub:  hubRun().Params(v1beta1.Param{Name: "greeting", Value: "hi"}, v1beta1.Param{Name: "empty", Value: ""}).Obj(),
			want: spokeRun().Annotation(stashed(`{"spec":{"params":[{"name":"greeting","value":"hi"},{"name":"empty","value":""}]}}`)).Obj(),
		},
		"spec.timeout is stashed": {
			hub:  hubRun().Timeout(90 * time.Minute).Obj(),
			want: spokeRun().Annotation(stashed(`{"spec":{"timeout":"1h30m0s"}}`)).Obj(),
		},
		"a zero spec.timeout is stashed apart from an absent one": {
			hub:  hubRun().Timeout(0).Obj(),
			want: spokeRun().Annotation(stashed(`{"spec":{"timeout":"0s"}}`)).Obj(),
		},
		"spec.status is stashed": {
			hub:  hubRun().Cancelled().Obj(),
			want: spokeRun().Annotation(stashed(`{"spec":{"status":"Cancelled"}}`)).Obj(),
		},
		"status.steps are stashed": {
			hub: hubRun().StepStates(buildStep, v1beta1.StepState{Name: "test", State: v1beta1.StepWaiting}).Obj(),
			want: spokeRun().Annotation(stashed(`{"status":{"steps":[` +
				`{"name":"build","state":"Terminated","exitCode":0,"reason":"Completed","startedAt":"2024-05-01T10:01:00Z","finishedAt":"2024-05-01T10:06:00Z"},` +
				`{"name":"test","state":"Waiting"}]}}`)).Obj(),
		},
		"everything lost shares one annotation": {
			hub: hubRun().Params(v1beta1.Param{Name: "greeting", Value: "hi"}).Timeout(time.Hour).Cancelled().
				Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask, created)).
				StepStates(v1beta1.StepState{Name: "build"}).Obj(),
			want: spokeRun().Phase(v1alpha1.TaskRunPhasePending).Annotation(stashed(`{` +
				`"spec":{"params":[{"name":"greeting","value":"hi"}],"timeout":"1h0m0s","status":"Cancelled"},` +
				`"status":{"conditions":[{"type":"Succeeded","status":"Unknown","lastTransitionTime":"2024-05-01T10:00:00Z","reason":"WaitingForTask","message":""}],` +
				`"steps":[{"name":"build"}]}}`)).Obj(),
		},
		"empty lists are not stashed": {
			hub:  hubRun().Params([]v1beta1.Param{}...).Conditions([]metav1.Condition{}...).StepStates([]v1beta1.StepState{}...).Obj(),
			want: spokeRun().Obj(),
		},
		"a stale annotation on the hub is dropped when nothing is lost": {
			hub:  hubRun().Annotation(stashed(`{"spec":{"status":"Cancelled"}}`)).Obj(),
			want: spokeRun().Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkFromHub(t, ConvertBetaTaskRunToAlpha, tc.hub, tc.want)
		})
	}
}

func TestConvertTaskRunToHub(t *testing.T) {
	runningWithMessage := succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)
	runningWithMessage.Message = `step "build" is running`
	succeededWithMessage := succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)
	succeededWithMessage.Message = "all 1 steps passed"
	waiting := succeeded(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask, created)
	waiting.Message = `Task "build" not found`
	stepFailed := succeeded(metav1.ConditionFalse, v1beta1.ReasonStepFailed, later)
	stepFailed.Message = `step "build" exited with code 2`

	tests := map[string]struct {
		spoke *v1alpha1.TaskRun
		want  *v1beta1.TaskRun
	}{
		"no spec and no status": {
			spoke: spokeRun().TaskRef("").Obj(),
			want:  hubRun().TaskRef("").Obj(),
		},
		"taskRef becomes taskRef.name, finishTime completionTime; empty phase: no condition": {
			spoke: spokeRun().TaskRef("other").PodName("nightly-pod").Started(started).Finished(finished).Obj(),
			want:  hubRun().TaskRef("other").PodName("nightly-pod").Started(started).Completed(finished).Obj(),
		},
		"Pending: Unknown Pending at startTime": {
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhasePending).Obj(),
			want:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonPending, started)).Obj(),
		},
		"Running: Unknown Running at finishTime, which comes before startTime": {
			spoke: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseRunning).Obj(),
			want:  hubRun().Started(started).Completed(finished).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, finished)).Obj(),
		},
		"Succeeded: True Succeeded at finishTime": {
			spoke: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseSucceeded).Obj(),
			want:  hubRun().Started(started).Completed(finished).Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)).Obj(),
		},
		"Failed: False Failed at creationTimestamp when there is no start or finish": {
			spoke: spokeRun().Phase(v1alpha1.TaskRunPhaseFailed).Obj(),
			want:  hubRun().Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, created)).Obj(),
		},
		"stashed fields are restored and the annotation removed": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"params":[{"name":"greeting","value":"hi"}],"timeout":"0s","status":"Cancelled"},` +
				`"status":{"steps":[{"name":"build","state":"Terminated","exitCode":0,"reason":"Completed","startedAt":"2024-05-01T10:01:00Z","finishedAt":"2024-05-01T10:06:00Z"}]}}`)).Obj(),
			want: hubRun().Params(v1beta1.Param{Name: "greeting", Value: "hi"}).Timeout(0).Cancelled().StepStates(buildStep).Obj(),
		},
		"WaitingForTask is restored while the phase is still Pending": {
			spoke: spokeRun().Phase(v1alpha1.TaskRunPhasePending).Annotation(stashed(stashedConditions(waiting))).Obj(),
			want:  hubRun().Conditions(waiting).Obj(),
		},
		"a stashed Failed condition is restored while the phase is still Failed, the spoke's times notwithstanding": {
			spoke: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(stepFailed))).Obj(),
			want:  hubRun().Completed(finished).Conditions(stepFailed).Obj(),
		},
		"a v1alpha1 writer moving Running to Failed gets False Failed": {
			spoke: spokeRun().Started(started).Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(runningWithMessage))).Obj(),
			want:  hubRun().Started(started).Completed(finished).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, finished)).Obj(),
		},
		"a stashed Succeeded condition is dropped when the phase changes": {
			spoke: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(stashedConditions(succeededWithMessage))).Obj(),
			want:  hubRun().Completed(finished).Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, finished)).Obj(),
		},
		"a v1alpha1 writer clearing the phase drops the Succeeded condition": {
			spoke: spokeRun().Started(started).Annotation(stashed(stashedConditions(runningWithMessage))).Obj(),
			want:  hubRun().Started(started).Obj(),
		},
		"stashed conditions of other types are kept, in order, while the phase holds": {
			spoke: spokeRun().Phase(v1alpha1.TaskRunPhasePending).Annotation(stashed(stashedConditions(readyCondition, waiting))).Obj(),
			want:  hubRun().Conditions(readyCondition, waiting).Obj(),
		},
		"stashed conditions of other types are kept when the phase changes": {
			spoke: spokeRun().Finished(finished).Phase(v1alpha1.TaskRunPhaseSucceeded).Annotation(stashed(stashedConditions(waiting, readyCondition))).Obj(),
			want:  hubRun().Completed(finished).Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished), readyCondition).Obj(),
		},
		"a phase set where only other types were stashed adds the derived condition": {
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).Annotation(stashed(stashedConditions(readyCondition))).Obj(),
			want:  hubRun().Started(started).Conditions(readyCondition, succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(),
		},
		"an unparsable annotation is ignored and removed; the condition comes from the phase": {
			spoke: spokeRun().Started(started).Phase(v1alpha1.TaskRunPhaseRunning).Annotation(AnnotationConversionData, "not json").Obj(),
			want:  hubRun().Started(started).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRunning, started)).Obj(),
		},
		"an annotation of the wrong shape is ignored whole": {
			spoke: spokeRun().Annotation(stashed(`{"spec":{"params":[{"name":"greeting","value":"hi"}],"timeout":"forever"}}`)).Obj(),
			want:  hubRun().Obj(),
		},
		"the spoke's values win: stashed fields v1alpha1 expresses are ignored": {
			spoke: spokeRun().PodName("new-pod").Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(`{"spec":{"taskRef":{"name":"old"}},` +
				`"status":{"podName":"old-pod","startTime":"2024-05-01T10:01:00Z","completionTime":"2024-05-01T10:06:00Z"}}`)).Obj(),
			want: hubRun().PodName("new-pod").Conditions(succeeded(metav1.ConditionFalse, v1beta1.ReasonFailed, created)).Obj(),
		},
		"removing the only annotation leaves none": {
			spoke: spokeRun().Annotations(nil).Annotation(stashed(`{"spec":{"status":"Cancelled"}}`)).Obj(),
			want:  hubRun().Annotations(nil).Cancelled().Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskRunToBeta, tc.spoke, tc.want)
		})
	}
}

// stashedConditions is the lost-fields JSON of a stash holding only conditions.
func stashedConditions(conditions ...metav1.Condition) string {
	return `{"status":{"conditions":` + conditionsJSON(conditions...) + `}}`
}

// conditionsJSON is conditions as the stash writes them.
func conditionsJSON(conditions ...metav1.Condition) string {
	data, err := json.Marshal(conditions)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func TestDerivedTransitionTime(t *testing.T) {
	tests := map[string]struct {
		run  *v1alpha1.TaskRun
		want metav1.Time
	}{
		"finishTime first":           {spokeRun().Started(started).Finished(finished).Obj(), finished},
		"finishTime without a start": {spokeRun().Finished(finished).Obj(), finished},
		"else startTime":             {spokeRun().Started(started).Obj(), started},
		"else creationTimestamp":     {spokeRun().Obj(), created},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, derivedTransitionTime(tc.run)); diff != "" {
				t.Errorf("derivedTransitionTime() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
