package runcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestTrimRun(t *testing.T) {
	now := metav1.Now()
	condition := func(status metav1.ConditionStatus, reason v1.TaskRunReason) metav1.Condition {
		return metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason), Message: "m", LastTransitionTime: now}
	}
	// run is a run that uses every field a finished run can do without, and
	// some it keeps.
	run := func(c ...metav1.Condition) *v1.TaskRun {
		r := wrappers.TaskRun("ns", "run", "build").Param("revision", "v1").Timeout(60e9).
			Label("team", "platform").ServiceAccount("builder").
			Workspace(v1.WorkspaceBinding{Name: "source", EmptyDir: &corev1.EmptyDirVolumeSource{}}).
			PodTemplate(v1.PodTemplate{NodeSelector: map[string]string{"pool": "builds"}}).
			Conditions(c...).PodName("run-pod").Started(now).Completed(now).
			StepStates(v1.StepState{Name: "build", State: v1.StepTerminated, ExitCode: ptr.To[int32](0)}).Obj()
		r.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: "{...}", "note": "kept"}
		r.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		return r
	}
	// asFinished is run as the cache keeps a finished one.
	asFinished := func(r *v1.TaskRun) *v1.TaskRun {
		r.ManagedFields = nil
		r.Spec.Params, r.Spec.Workspaces, r.Spec.PodTemplate, r.Status.Steps = nil, nil, nil, nil
		r.Annotations = map[string]string{"note": "kept"}
		return r
	}
	withoutManagedFields := func(r *v1.TaskRun) *v1.TaskRun {
		r.ManagedFields = nil
		return r
	}
	tests := map[string]struct {
		in, want *v1.TaskRun
	}{
		"never seen by the controller": {run(), withoutManagedFields(run())},
		"going on":                     {run(condition(metav1.ConditionUnknown, v1.ReasonRunning)), withoutManagedFields(run(condition(metav1.ConditionUnknown, v1.ReasonRunning)))},
		"succeeded":                    {run(condition(metav1.ConditionTrue, v1.ReasonSucceeded)), asFinished(run(condition(metav1.ConditionTrue, v1.ReasonSucceeded)))},
		"failed":                       {run(condition(metav1.ConditionFalse, v1.ReasonStepFailed)), asFinished(run(condition(metav1.ConditionFalse, v1.ReasonStepFailed)))},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := TrimRun(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cached TaskRun (-want +got):\n%s", diff)
			}
		})
	}
	if other, _ := TrimRun(&corev1.Pod{}); !cmp.Equal(other, &corev1.Pod{}) {
		t.Errorf("TrimRun changed a Pod: %v", other)
	}
}
