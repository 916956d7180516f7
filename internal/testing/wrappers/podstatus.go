package wrappers

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// PodStatusWrapper builds the status that the kubelet reports for a Pod whose
// init containers and container run one after another, or for a chained Pod
// (runstate.Chained), whose containers all run from the start, each waiting
// for its turn, and whose steps after a failed one end skipped. Steps are
// counted without the Pod's native sidecars (WithSidecars), which run from
// the Pod's start.
type PodStatusWrapper struct {
	pod    *corev1.Pod
	at     metav1.Time
	status corev1.PodStatus
}

// PodStatus starts the status of pod as the kubelet first reports it: it has
// taken the Pod up, which is pending, and every container waits.
func PodStatus(pod *corev1.Pod) *PodStatusWrapper {
	w := &PodStatusWrapper{pod: pod, at: metav1.NewTime(time.Now().Truncate(time.Second))}
	w.steps(corev1.PodPending, 0, waiting("ContainerCreating"))
	for k := range w.status.InitContainerStatuses {
		if cs := &w.status.InitContainerStatuses[k]; w.sidecar(cs.Name) {
			cs.State, cs.Started, cs.Ready = waiting("ContainerCreating"), nil, false
		}
	}
	return w
}

// At sets the time of every timestamp that the methods called after it write.
func (w *PodStatusWrapper) At(t time.Time) *PodStatusWrapper {
	w.at = metav1.NewTime(t)
	return w
}

// Running reports step i (counting init containers first) running, the
// steps before it completed and those after it waiting.
func (w *PodStatusWrapper) Running(i int) *PodStatusWrapper {
	phase := corev1.PodPending
	if i >= len(w.pod.Spec.InitContainers)-len(runstate.NativeSidecars(w.pod)) {
		phase = corev1.PodRunning
	}
	return w.steps(phase, i, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: w.at}})
}

// Succeeded reports every step completed with exit code 0.
func (w *PodStatusWrapper) Succeeded() *PodStatusWrapper {
	n := len(runstate.Steps(w.pod))
	return w.steps(corev1.PodSucceeded, n-1, w.terminated(0, "Completed"))
}

// StepFailed reports step i exited with code, which fails the Pod.
func (w *PodStatusWrapper) StepFailed(i int, code int32) *PodStatusWrapper {
	return w.steps(corev1.PodFailed, i, w.terminated(code, "Error"))
}

// Evicted reports the Pod evicted while step i ran.
func (w *PodStatusWrapper) Evicted(i int, message string) *PodStatusWrapper {
	w.steps(corev1.PodFailed, i, w.terminated(137, "Error"))
	w.status.Reason, w.status.Message = "Evicted", message
	return w
}

// DeadlineExceeded reports the Pod stopped at its activeDeadlineSeconds while step i ran.
func (w *PodStatusWrapper) DeadlineExceeded(i int) *PodStatusWrapper {
	w.steps(corev1.PodFailed, i, w.terminated(137, "Error"))
	w.status.Reason, w.status.Message = "DeadlineExceeded", "Pod was active on the node longer than the specified deadline"
	return w
}

// OOMKilled reports step i killed for its memory, which fails the Pod.
func (w *PodStatusWrapper) OOMKilled(i int) *PodStatusWrapper {
	return w.steps(corev1.PodFailed, i, w.terminated(137, "OOMKilled"))
}

// StartError reports that the runtime could not start step i, as containerd
// says it (exit code 128, the runtime's message), which fails the Pod.
func (w *PodStatusWrapper) StartError(i int, message string) *PodStatusWrapper {
	state := w.terminated(128, "StartError")
	state.Terminated.Message = message
	return w.steps(corev1.PodFailed, i, state)
}

// Waiting reports step i waiting with reason and message, the steps before
// it completed and the Pod pending: a container the kubelet cannot make.
func (w *PodStatusWrapper) Waiting(i int, reason, message string) *PodStatusWrapper {
	return w.steps(corev1.PodPending, i, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
}

// CannotPull reports the kubelet failing to pull step i's image, waiting
// with reason (ErrImagePull, ImagePullBackOff) and message: the Pod taken up
// at the time At set, the steps before i completed at done.
func (w *PodStatusWrapper) CannotPull(i int, reason, message string, done time.Time) *PodStatusWrapper {
	w.steps(corev1.PodPending, i, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
	for _, cs := range w.stepStatuses() {
		if t := cs.State.Terminated; t != nil {
			t.FinishedAt = metav1.NewTime(done)
		}
	}
	return w
}

// Ended reports step i (counting init containers first), which a method
// before it reported terminated, ended with code and message, its
// termination message. A code other than 0 fails the Pod, as the kubelet has
// it. A step not terminated is a mistake of the test, and panics.
func (w *PodStatusWrapper) Ended(i int, code int32, message string) *PodStatusWrapper {
	t := w.stepStatuses()[i].State.Terminated
	if t == nil {
		panic(fmt.Sprintf("Ended(%d): step %d of Pod %s is not terminated", i, i, w.pod.Name))
	}
	t.ExitCode, t.Message = code, message
	if code != 0 {
		t.Reason, w.status.Phase = "Error", corev1.PodFailed
	}
	return w
}

// Phase sets the Pod's phase: Running, say, for a chained Pod whose step
// failed while the containers after it still run.
func (w *PodStatusWrapper) Phase(phase corev1.PodPhase) *PodStatusWrapper {
	w.status.Phase = phase
	return w
}

// Obj returns the status.
func (w *PodStatusWrapper) Obj() corev1.PodStatus { return w.status }

// steps sets phase, and the steps' containers: completed before current, in
// state current at current, waiting after. Native sidecars run.
func (w *PodStatusWrapper) steps(phase corev1.PodPhase, current int, state corev1.ContainerState) *PodStatusWrapper {
	start := w.at
	w.status = corev1.PodStatus{Phase: phase, StartTime: &start}
	chained := runstate.Chained(w.pod)
	creating := state.Waiting != nil && state.Waiting.Reason == "ContainerCreating"
	i := 0
	status := func(c corev1.Container) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
		switch {
		case runstate.IsNativeSidecar(c):
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: w.at}}
			cs.Started, cs.Ready = ptr.To(true), true
			return cs
		case i < current:
			cs.State = w.terminated(0, "Completed")
		case i == current:
			cs.State = state
		case !chained:
			cs.State = waiting("PodInitializing")
		case phase == corev1.PodFailed || phase == corev1.PodSucceeded:
			cs.State = w.terminated(0, "Completed")
			cs.State.Terminated.Message = runstate.SkippedMessage
		case creating:
			cs.State = waiting("ContainerCreating")
		default:
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: w.at}}
		}
		i++
		return cs
	}
	for _, c := range w.pod.Spec.InitContainers {
		w.status.InitContainerStatuses = append(w.status.InitContainerStatuses, status(c))
	}
	for _, c := range w.pod.Spec.Containers {
		w.status.ContainerStatuses = append(w.status.ContainerStatuses, status(c))
	}
	return w
}

// stepStatuses returns the status of each step's container, in step order:
// the init containers' but the native sidecars', then the containers'.
func (w *PodStatusWrapper) stepStatuses() []*corev1.ContainerStatus {
	var statuses []*corev1.ContainerStatus
	for k := range w.status.InitContainerStatuses {
		if !w.sidecar(w.status.InitContainerStatuses[k].Name) {
			statuses = append(statuses, &w.status.InitContainerStatuses[k])
		}
	}
	for k := range w.status.ContainerStatuses {
		statuses = append(statuses, &w.status.ContainerStatuses[k])
	}
	return statuses
}

func (w *PodStatusWrapper) sidecar(container string) bool {
	return slices.Contains(runstate.NativeSidecars(w.pod), container)
}

func (w *PodStatusWrapper) terminated(code int32, reason string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: w.at, FinishedAt: w.at,
	}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}
