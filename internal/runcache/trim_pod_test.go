package runcache

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func TestTrimPodKeepsWhatTheControllerReads(t *testing.T) {
	started := metav1.Now()
	status := corev1.ContainerStatus{Name: "step-build", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
	meta := metav1.ObjectMeta{Name: "run-pod", Namespace: "ci", UID: "u", ResourceVersion: "7",
		Labels: map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue}, OwnerReferences: []metav1.OwnerReference{{Name: "run"}}}
	full := &corev1.Pod{
		ObjectMeta: *meta.DeepCopy(),
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "sidecar-db", Image: "postgres", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Ports: []corev1.ContainerPort{{ContainerPort: 5432}}},
				{Name: "step-build", Image: "golang", Command: []string{"sh", "-c", "make"}},
			},
			Containers:            []corev1.Container{{Name: "step-push", Image: "alpine", Env: []corev1.EnvVar{{Name: "A"}}}},
			ActiveDeadlineSeconds: ptr.To[int64](60), RestartPolicy: corev1.RestartPolicyNever, NodeName: "node-1",
			Volumes:     []corev1.Volume{{Name: "token"}},
			Tolerations: []corev1.Toleration{{Key: "k"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "too slow",
			StartTime: &started, InitContainerStatuses: []corev1.ContainerStatus{status},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady}}, PodIP: "10.0.0.1"},
	}
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	before := full.DeepCopy()

	got, err := TrimPod(full)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "sidecar-db", Image: "postgres", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
				{Name: "step-build", Image: "golang"},
			},
			Containers:            []corev1.Container{{Name: "step-push", Image: "alpine"}},
			ActiveDeadlineSeconds: ptr.To[int64](60), RestartPolicy: corev1.RestartPolicyNever, NodeName: "node-1",
		},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "too slow",
			StartTime: &started, InitContainerStatuses: []corev1.ContainerStatus{status}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed Pod (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, full); diff != "" {
		t.Errorf("TrimPod changed its input (-before +after):\n%s", diff)
	}
	if other, _ := TrimPod(&corev1.Node{}); !cmp.Equal(other, &corev1.Node{}) {
		t.Errorf("TrimPod changed a non-Pod: %v", other)
	}
}

// TestTrimPodKeepsTheConditionsItReads: PodScheduled, whose message the
// Pending message repeats, and PodReadyToStartContainers, which says whether
// a volume may hold the Pod back.
func TestTrimPodKeepsTheConditionsItReads(t *testing.T) {
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}
	stamped := unschedulable
	stamped.LastTransitionTime, stamped.LastProbeTime = metav1.Now(), metav1.Now()
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "not ready"}
	noSandbox := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}
	noSandboxStamped := noSandbox
	noSandboxStamped.LastTransitionTime = metav1.Now()
	tests := map[string]struct {
		conditions []corev1.PodCondition
		want       []corev1.PodCondition
	}{
		"none":                             {nil, nil},
		"others only":                      {[]corev1.PodCondition{ready}, nil},
		"unschedulable, without its times": {[]corev1.PodCondition{stamped}, []corev1.PodCondition{unschedulable}},
		"scheduled, among others":          {[]corev1.PodCondition{ready, scheduled}, []corev1.PodCondition{scheduled}},
		"unschedulable, before the others": {[]corev1.PodCondition{unschedulable, ready}, []corev1.PodCondition{unschedulable}},
		"no sandbox yet, without its times, among others": {[]corev1.PodCondition{ready, scheduled, noSandboxStamped},
			[]corev1.PodCondition{scheduled, noSandbox}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := TrimPod(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: tc.conditions}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.(*corev1.Pod).Status.Conditions); diff != "" {
				t.Errorf("trimmed Pod's conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimPodKeepsWhatSidecarsNeed: a native sidecar keeps its probes, and
// its status whether it started and is ready, its restarts and its last
// exit (status.sidecars, runpod.HeldBySidecar); a step's container no probe.
func TestTrimPodKeepsWhatSidecarsNeed(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready"}}}}
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	got, err := TrimPod(&corev1.Pod{
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{
			{Name: "sidecar-db", Image: "postgres", RestartPolicy: always, ReadinessProbe: probe, StartupProbe: probe},
			{Name: "step-a", Image: "alpine", ReadinessProbe: probe},
		}},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar-db", Ready: true, Started: ptr.To(true), RestartCount: 2,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "long"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{
			{Name: "sidecar-db", Image: "postgres", RestartPolicy: always, ReadinessProbe: probe, StartupProbe: probe},
			{Name: "step-a", Image: "alpine"},
		}},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar-db", Ready: true, Started: ptr.To(true), RestartCount: 2,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed Pod (-want +got):\n%s", diff)
	}
}

func TestTrimPodKeepsEachContainersNameAndState(t *testing.T) {
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error",
		Message: `{"exitCode": 3}`, StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "pull access denied"}}
	// As the kubelet reports them, with what the controller never reads.
	reported := func(name string, state corev1.ContainerState) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: state, Image: "golang:1.26", ImageID: "docker.io/library/golang@sha256:0",
			ContainerID: "containerd://0", Started: ptr.To(false), RestartCount: 0,
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "ws-source", MountPath: "/workspace/source"}},
			Resources:    &corev1.ResourceRequirements{}, User: &corev1.ContainerUser{}}
	}
	got, err := TrimPod(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning,
		InitContainerStatuses: []corev1.ContainerStatus{reported("step-build", terminated)},
		ContainerStatuses:     []corev1.ContainerStatus{reported("step-push", waiting)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.PodStatus{Phase: corev1.PodRunning,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "step-build", State: terminated, Started: ptr.To(false)}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "step-push", State: waiting, Started: ptr.To(false)}}}
	if diff := cmp.Diff(want, got.(*corev1.Pod).Status); diff != "" {
		t.Errorf("trimmed Pod's status (-want +got):\n%s", diff)
	}
}

// TestTrimmedPodKeepsWhatResultsNeed: the cache's trimmed Pod (TrimPod) keeps
// the annotations, container names and termination messages that results,
// exit codes and ResultsTooLarge are read from (internal/runpod).
func TestTrimmedPodKeepsWhatResultsNeed(t *testing.T) {
	pods := map[string]*corev1.Pod{
		"results and continue": endedResultsPod(3, map[int]string{
			0: `{"exitCode":0,"results":{"digest":"sha256:1","version":"1"}}`,
			2: `{"exitCode":3,"results":{"digest":"sha256:2"}}`,
		}),
		// Six steps share 12 KiB: a message the kubelet cut at 2048 bytes.
		"too large": endedResultsPod(6, map[int]string{4: (`{"exitCode":0,"results":{"digest":"` + strings.Repeat("d", 3000))[:2048]}),
		// Release 7's: its sidecar still runs, and is no step.
		"results beside a native sidecar": withSidecar(endedResultsPod(2, map[int]string{
			1: `{"exitCode":0,"results":{"digest":"sha256:1","version":"1"}}`,
		})),
	}
	for name, pod := range pods {
		t.Run(name, func(t *testing.T) {
			obj, err := TrimPod(pod)
			if err != nil {
				t.Fatal(err)
			}
			trimmed := obj.(*corev1.Pod)
			if diff := cmp.Diff(runpod.Results(pod), runpod.Results(trimmed)); diff != "" {
				t.Errorf("results from the trimmed Pod (-full +trimmed):\n%s", diff)
			}
			steps, trimmedSteps := runpod.StepStates(pod), runpod.StepStates(trimmed)
			if diff := cmp.Diff(steps, trimmedSteps); diff != "" {
				t.Errorf("steps from the trimmed Pod (-full +trimmed):\n%s", diff)
			}
			if diff := cmp.Diff(runpod.Outcome(pod, steps), runpod.Outcome(trimmed, trimmedSteps)); diff != "" {
				t.Errorf("outcome from the trimmed Pod (-full +trimmed):\n%s", diff)
			}
		})
	}
}
