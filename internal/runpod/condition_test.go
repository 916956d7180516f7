package runpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestOutcome(t *testing.T) {
	pod := threeStepPod()
	status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
	deleting := withStatus(pod, status().Running(1).Obj())
	deleting.DeletionTimestamp = &metav1.Time{Time: testTime}
	tests := map[string]struct {
		pod  *corev1.Pod
		want *Condition
	}{
		"pending":   {withStatus(pod, status().Obj()), nil},
		"running":   {withStatus(pod, status().Running(2).Obj()), nil},
		"succeeded": {withStatus(pod, status().Succeeded().Obj()), succeeded()},
		// The kubelet reports the last container's end a relist before
		// the Pod's phase.
		"every container ended 0, the phase not yet": {withStatus(pod, status().Succeeded().Phase(corev1.PodRunning).Obj()), succeeded()},
		"init failed":            {withStatus(pod, status().StepFailed(1, 3).Obj()), &Condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "b" exited with code 3`}},
		"last failed":            {withStatus(pod, status().StepFailed(2, 127).Obj()), &Condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "c" exited with code 127`}},
		"evicted":                {withStatus(pod, status().Evicted(0, "The node was low on resource: memory.").Obj()), &Condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was evicted: The node was low on resource: memory.`}},
		"deadline":               {withStatus(pod, status().DeadlineExceeded(0).Obj()), &Condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`}},
		"failed, no step failed": {withStatus(pod, corev1.PodStatus{Phase: corev1.PodFailed, Message: "lost"}), &Condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed: lost`}},
		"deleted while running":  {deleting, &Condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" was deleted before the run finished`}},
		"failed by the Pod garbage collector": {failedByPodGC(withStatus(pod, status().Running(1).Obj())),
			&Condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" failed (DeletionByPodGC): PodGC: node no longer exists`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Outcome(tc.pod, StepStates(tc.pod))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	pod := threeStepPod()
	tests := map[string]struct {
		status corev1.PodStatus
		want   *Condition
	}{
		"no status yet": {corev1.PodStatus{}, &Condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`}},
		"all waiting":   {wrappers.PodStatus(pod).Obj(), &Condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`}},
		"first running": {wrappers.PodStatus(pod).Running(0).Obj(), &Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "a" (1 of 3)`}},
		"last running":  {wrappers.PodStatus(pod).Running(2).Obj(), &Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "c" (3 of 3)`}},
		"between steps": {betweenSteps(pod), &Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "b" (2 of 3)`}},
		"later step's image cannot be pulled": {wrappers.PodStatus(pod).At(testTime).CannotPull(1, "ImagePullBackOff", `Back-off pulling image "alpine"`, testTime).Obj(),
			&Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "b" (2 of 3): ImagePullBackOff: Back-off pulling image "alpine"`}},
		"later step's container cannot be made, no message": {wrappers.PodStatus(pod).At(testTime).CannotPull(2, "CreateContainerConfigError", "", testTime).Obj(),
			&Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "c" (3 of 3): CreateContainerConfigError`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := withStatus(pod, tc.status)
			if diff := cmp.Diff(tc.want, Progress(p, StepStates(p), nil)); diff != "" {
				t.Errorf("Progress() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// betweenSteps is the status of a Pod whose first step completed and whose
// second has not started yet.
func betweenSteps(pod *corev1.Pod) corev1.PodStatus {
	status := wrappers.PodStatus(pod).Running(1).Obj()
	status.InitContainerStatuses[1].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	return status
}
