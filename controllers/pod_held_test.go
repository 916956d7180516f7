package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// pullTestTime is when the kubelet took the Pods of these tests up.
var pullTestTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// pullPod is a Pod of three steps, a and b as init containers and c as its
// container, each in the given state (nil: not reported yet).
func pullPod(states ...*corev1.ContainerState) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "run-pod", CreationTimestamp: metav1.NewTime(pullTestTime.Add(-time.Minute))},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "step-a", Image: "alpine:a"}, {Name: "step-b", Image: "alpine:b"}},
			Containers:     []corev1.Container{{Name: "step-c", Image: "alpine:c"}},
		},
		Status: corev1.PodStatus{StartTime: &metav1.Time{Time: pullTestTime}},
	}
	for i, state := range states {
		if state == nil {
			continue
		}
		if i < 2 {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: pod.Spec.InitContainers[i].Name, State: *state})
		} else {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: "step-c", State: *state})
		}
	}
	return pod
}

func waitingFor(reason, message string) *corev1.ContainerState {
	return &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

func doneAt(at time.Time) *corev1.ContainerState {
	return &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: metav1.NewTime(at)}}
}

func TestFindFailingPull(t *testing.T) {
	backOff := waitingFor("ImagePullBackOff", `Back-off pulling image "alpine:a"`)
	initializing := waitingFor("PodInitializing", "")
	type found struct {
		Step, Image, Reason string
		Since               time.Time
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want *found
	}{
		"no status yet": {pullPod(), nil},
		"first step pulling, from the Pod's start": {pullPod(backOff, initializing, initializing),
			&found{"a", "alpine:a", "ImagePullBackOff", pullTestTime}},
		"ErrImagePull counts too": {pullPod(waitingFor("ErrImagePull", "rpc error"), initializing, initializing),
			&found{"a", "alpine:a", "ErrImagePull", pullTestTime}},
		"Pod not taken up: from its creation": {func() *corev1.Pod {
			pod := pullPod(backOff, initializing, initializing)
			pod.Status.StartTime = nil
			return pod
		}(), &found{"a", "alpine:a", "ImagePullBackOff", pullTestTime.Add(-time.Minute)}},
		"second step, from when the first finished": {pullPod(doneAt(pullTestTime.Add(time.Hour)), waitingFor("ErrImagePull", "not found"), initializing),
			&found{"b", "alpine:b", "ErrImagePull", pullTestTime.Add(time.Hour)}},
		"the container, from the last init container's end": {pullPod(doneAt(pullTestTime.Add(time.Minute)), doneAt(pullTestTime.Add(2*time.Minute)), backOff),
			&found{"c", "alpine:c", "ImagePullBackOff", pullTestTime.Add(2 * time.Minute)}},
		"first step creating its container":           {pullPod(waitingFor("ContainerCreating", ""), initializing, initializing), nil},
		"first step running":                          {pullPod(&corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, initializing, initializing), nil},
		"a missing ConfigMap is not an image pull":    {pullPod(waitingFor("CreateContainerConfigError", `configmap "x" not found`), initializing, initializing), nil},
		"a later step's pull is not looked at before": {pullPod(&corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, backOff, initializing), nil},
		"every step done":                             {pullPod(doneAt(pullTestTime), doneAt(pullTestTime), doneAt(pullTestTime)), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got *found
			if pull := findFailingPull(tc.pod); pull != nil {
				got = &found{pull.step, pull.image, pull.waiting.Reason, pull.since}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findFailingPull() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImagePullFailedMessage(t *testing.T) {
	tests := map[string]struct {
		waiting *corev1.ContainerStateWaiting
		want    string
	}{
		"with the kubelet's message": {&corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`},
			`step "build" could not pull image "nope:1" for 5m0s: ImagePullBackOff: Back-off pulling image "nope:1"`},
		"without": {&corev1.ContainerStateWaiting{Reason: "ErrImagePull"},
			`step "build" could not pull image "nope:1" for 5m0s: ErrImagePull`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := imagePullFailed(&failingPull{step: "build", image: "nope:1", waiting: tc.waiting}, DefaultImagePullTimeout)
			want := &outcome{metav1.ConditionFalse, v1beta1.ReasonImagePullFailed, tc.want}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("imagePullFailed() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
