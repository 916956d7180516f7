package runpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPendingMessage: a run whose Pod has not started a step says what holds
// it back, as the scheduler or the kubelet reports it (a missing
// PersistentVolumeClaim, Secret or image, say).
func TestPendingMessage(t *testing.T) {
	pod := threeStepPod()
	waiting := func(i int, reason, message string) corev1.PodStatus {
		status := wrappers.PodStatus(pod).Obj()
		state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		if n := len(status.InitContainerStatuses); i >= n {
			status.ContainerStatuses[i-n].State = state
		} else {
			status.InitContainerStatuses[i].State = state
		}
		return status
	}
	unschedulable := corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: `0/3 nodes are available: persistentvolumeclaim "cache" not found.`,
	}
	mount := &Hold{Reason: v1.ReasonPodConfigFailed, Volume: "ws-src", Why: corev1.ContainerStateWaiting{
		Reason: "FailedMount", Message: `MountVolume.SetUp failed for volume "ws-src" : configmap "settings" not found`}}
	tests := map[string]struct {
		status corev1.PodStatus
		// mount is a volume the kubelet cannot mount, as its Events say.
		mount *Hold
		want  string
	}{
		"no status yet":           {status: corev1.PodStatus{}, want: `Pod "run-pod" has not started a step yet`},
		"every step on its way":   {status: wrappers.PodStatus(pod).Obj(), want: `Pod "run-pod" has not started a step yet`},
		"container being created": {status: waiting(0, "ContainerCreating", ""), want: `Pod "run-pod" has not started a step yet`},
		"unschedulable: the scheduler's message": {
			status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{unschedulable}},
			want:   `Pod "run-pod" cannot be scheduled: 0/3 nodes are available: persistentvolumeclaim "cache" not found.`,
		},
		"scheduled: its condition says nothing": {
			status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}},
			want:   `Pod "run-pod" has not started a step yet`,
		},
		"a missing Secret: the first step's reason and message": {
			status: waiting(0, "CreateContainerConfigError", `secret "git" not found`),
			want:   `step "a": CreateContainerConfigError: secret "git" not found`,
		},
		"a later step held, earlier ones on their way": {
			status: waiting(2, "ErrImagePull", `pull access denied for nope`),
			want:   `step "c": ErrImagePull: pull access denied for nope`,
		},
		"the first held step in the steps' order": {
			status: func() corev1.PodStatus {
				s := waiting(2, "ImagePullBackOff", "Back-off pulling image")
				s.InitContainerStatuses[1].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}
				return s
			}(),
			want: `step "b": ErrImagePull`,
		},
		"the scheduler's reason before the kubelet's": {
			status: func() corev1.PodStatus {
				s := waiting(0, "CreateContainerConfigError", `secret "git" not found`)
				s.Conditions = []corev1.PodCondition{unschedulable}
				return s
			}(),
			want: `Pod "run-pod" cannot be scheduled: 0/3 nodes are available: persistentvolumeclaim "cache" not found.`,
		},
		"a volume that cannot mount: the kubelet's Event": {
			status: wrappers.PodStatus(pod).Obj(), mount: mount,
			want: `volume "ws-src": FailedMount: MountVolume.SetUp failed for volume "ws-src" : configmap "settings" not found`,
		},
		"a held step before a volume": {
			status: waiting(0, "CreateContainerConfigError", `secret "git" not found`), mount: mount,
			want: `step "a": CreateContainerConfigError: secret "git" not found`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pendingMessage(withStatus(pod, tc.status), tc.mount)); diff != "" {
				t.Errorf("pendingMessage() (-want +got):\n%s", diff)
			}
		})
	}
}
