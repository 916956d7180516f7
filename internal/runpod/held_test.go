package runpod

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
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

// TestFindHeldStep: the step that comes next in order, if the kubelet holds
// it back: its image cannot be pulled, waited for from when the step could
// start, or its container cannot be made for the Pod's configuration.
func TestFindHeldStep(t *testing.T) {
	backOff := waitingFor("ImagePullBackOff", `Back-off pulling image "alpine:a"`)
	initializing := waitingFor("PodInitializing", "")
	pull, config := v1.ReasonImagePullFailed, v1.ReasonPodConfigFailed
	type found struct {
		Reason              v1.TaskRunReason
		Step, Image, Waited string
		Since               time.Time
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want *found
	}{
		"no status yet": {pullPod(), nil},
		"first step pulling, from the Pod's start": {pullPod(backOff, initializing, initializing),
			&found{pull, "a", "alpine:a", "ImagePullBackOff", pullTestTime}},
		"ErrImagePull counts too": {pullPod(waitingFor("ErrImagePull", "rpc error"), initializing, initializing),
			&found{pull, "a", "alpine:a", "ErrImagePull", pullTestTime}},
		"Pod not taken up: from its creation": {func() *corev1.Pod {
			pod := pullPod(backOff, initializing, initializing)
			pod.Status.StartTime = nil
			return pod
		}(), &found{pull, "a", "alpine:a", "ImagePullBackOff", pullTestTime.Add(-time.Minute)}},
		"second step, from when the first finished": {pullPod(doneAt(pullTestTime.Add(time.Hour)), waitingFor("ErrImagePull", "not found"), initializing),
			&found{pull, "b", "alpine:b", "ErrImagePull", pullTestTime.Add(time.Hour)}},
		"the container, from the last init container's end": {pullPod(doneAt(pullTestTime.Add(time.Minute)), doneAt(pullTestTime.Add(2*time.Minute)), backOff),
			&found{pull, "c", "alpine:c", "ImagePullBackOff", pullTestTime.Add(2 * time.Minute)}},
		"a missing ConfigMap": {pullPod(waitingFor("CreateContainerConfigError", `configmap "x" not found`), initializing, initializing),
			&found{config, "a", "alpine:a", "CreateContainerConfigError", pullTestTime}},
		"a container the runtime cannot make": {pullPod(doneAt(pullTestTime), waitingFor("CreateContainerError", "context deadline exceeded"), initializing),
			&found{config, "b", "alpine:b", "CreateContainerError", pullTestTime}},
		"a container the runtime cannot start": {pullPod(doneAt(pullTestTime), doneAt(pullTestTime), waitingFor("RunContainerError", "failed to start")),
			&found{config, "c", "alpine:c", "RunContainerError", pullTestTime}},
		"an executable that cannot run fails at once, and is no hold": {
			pullPod(waitingFor("CreateContainerError", "executable file `gcc` not found in $PATH: No such file or directory"), initializing, initializing), nil},
		"first step creating its container":           {pullPod(waitingFor("ContainerCreating", ""), initializing, initializing), nil},
		"first step running":                          {pullPod(&corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, initializing, initializing), nil},
		"a later step's pull is not looked at before": {pullPod(&corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, backOff, initializing), nil},
		"every step done":                             {pullPod(doneAt(pullTestTime), doneAt(pullTestTime), doneAt(pullTestTime)), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got *found
			if h := FindHeldStep(tc.pod); h != nil {
				got = &found{h.Reason, h.Step, h.Image, h.Why.Reason, h.Since}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FindHeldStep() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHeldOutcome: how a run held back too long ends, naming what held it
// and the kubelet's reason and message.
func TestHeldOutcome(t *testing.T) {
	// The manager's defaults of --image-pull-timeout and --pod-config-timeout.
	const pullTimeout, configTimeout = 5 * time.Minute, 2 * time.Minute
	tests := map[string]struct {
		hold    Hold
		timeout time.Duration
		want    *Condition
	}{
		"a pull, with the kubelet's message": {
			Hold{Reason: v1.ReasonImagePullFailed, Step: "build", Image: "nope:1",
				Why: corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`}},
			pullTimeout,
			&Condition{metav1.ConditionFalse, v1.ReasonImagePullFailed,
				`step "build" could not pull image "nope:1" for 5m0s: ImagePullBackOff: Back-off pulling image "nope:1"`},
		},
		"a pull, without": {
			Hold{Reason: v1.ReasonImagePullFailed, Step: "build", Image: "nope:1", Why: corev1.ContainerStateWaiting{Reason: "ErrImagePull"}},
			pullTimeout,
			&Condition{metav1.ConditionFalse, v1.ReasonImagePullFailed, `step "build" could not pull image "nope:1" for 5m0s: ErrImagePull`},
		},
		"a step's container": {
			Hold{Reason: v1.ReasonPodConfigFailed, Step: "build", Image: "alpine:3",
				Why: corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "git" not found`}},
			configTimeout,
			&Condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
				`step "build" could not start for 2m0s: CreateContainerConfigError: secret "git" not found`},
		},
		"a volume": {
			Hold{Reason: v1.ReasonPodConfigFailed, Volume: "ws-src",
				Why: corev1.ContainerStateWaiting{Reason: "FailedMount", Message: `MountVolume.SetUp failed for volume "ws-src" : configmap "settings" not found`}},
			configTimeout,
			&Condition{metav1.ConditionFalse, v1.ReasonPodConfigFailed,
				`volume "ws-src" could not be mounted for 2m0s: FailedMount: MountVolume.SetUp failed for volume "ws-src" : configmap "settings" not found`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.hold.Outcome(tc.timeout)); diff != "" {
				t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
