package runlogs

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// PodSource reads a run's step logs from its Pod, through the Pod logs API,
// one container per step.
type PodSource struct {
	// Reader reads the TaskRun, its Pod and its Task.
	Reader client.Reader
	// Pods opens container logs.
	Pods corev1client.PodsGetter
	// Namespace and Run name the TaskRun.
	Namespace, Run string
	// PollInterval is how often Open looks again at a step that has not
	// started, and NextAttempt at a run between attempts, when following.
	PollInterval time.Duration

	// attempt is the attempt being read, from 0, once pinned is set (by
	// NextAttempt); before, the run's current attempt.
	attempt int
	pinned  bool
}

var _ Source = (*PodSource)(nil)

// Steps returns the steps in the order the run's Pod runs them; before there
// is a Pod, in the order of the run's status, else of its Task; none while
// the Task does not exist. With follow, a run waiting for its Task is waited
// for too, as the controller does, until the Task appears or the run ends
// (its timeout, say).
func (s *PodSource) Steps(ctx context.Context, follow bool) ([]string, error) {
	var names []string
	err := wait.PollUntilContextCancel(ctx, s.PollInterval, true, func(ctx context.Context) (bool, error) {
		var run *v1.TaskRun
		var err error
		run, names, err = s.steps(ctx)
		return err != nil || len(names) > 0 || !follow || runstate.Finished(run), err
	})
	return names, err
}

// steps returns the run and its steps as they are known now.
func (s *PodSource) steps(ctx context.Context) (*v1.TaskRun, []string, error) {
	run, pod, err := s.read(ctx)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	switch {
	case pod != nil:
		for _, step := range runstate.Steps(pod) {
			names = append(names, step.Name)
		}
	case len(run.Status.Steps) > 0 && s.attemptOf(run) == len(run.Status.Attempts):
		// status.steps are the current attempt's.
		for _, st := range run.Status.Steps {
			names = append(names, st.Name)
		}
	default:
		task := &v1.Task{}
		key := client.ObjectKey{Namespace: s.Namespace, Name: run.Spec.TaskRef.Name}
		err := s.Reader.Get(ctx, key, task)
		if apierrors.IsNotFound(err) {
			// The run waits for its Task: no step is known, none has run.
			return run, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("TaskRun %q has no Pod yet, and reading its Task %q failed: %w", s.Run, key.Name, err)
		}
		for _, st := range task.Spec.Steps {
			names = append(names, st.Name)
		}
	}
	return run, names, nil
}

// Open opens the log of step's container once it has started.
func (s *PodSource) Open(ctx context.Context, step string, follow bool) (io.ReadCloser, error) {
	for {
		run, pod, err := s.read(ctx)
		if apierrors.IsNotFound(err) {
			// The run was deleted since its steps were read, as the
			// controller deletes one whose TTL after finishing is 0: no
			// step starts now.
			return nil, ErrNotStarted
		}
		if err != nil {
			return nil, err
		}
		container, ok := containerOf(pod, step)
		if ok && stepStarted(pod, container) {
			log, err := s.openLog(ctx, pod, container, follow)
			if err == nil {
				return log, nil
			}
			if why := s.whyGone(ctx, pod, err); why != "" {
				return nil, &GoneError{Step: step, Why: why}
			}
			// Following, a kubelet that cannot serve the log now (one
			// restarting, say) is waited for, until it serves the log or
			// its node is known lost.
			if !follow || !kubeletNotServing(err) {
				return nil, err
			}
		} else {
			if why := podGone(run, s.attemptOf(run), pod, step); why != "" {
				return nil, &GoneError{Step: step, Why: why}
			}
			// A step of an attempt that has failed never starts: the run
			// goes on, if at all, in the next attempt's Pod. Nor does a
			// chained step whose container ended before its turn came:
			// skipped after a step before it failed, or stopped waiting.
			if !follow || runstate.Finished(run) || podEnded(pod) || s.attemptOf(run) < len(run.Status.Attempts) ||
				ok && containerEnded(pod, container) {
				return nil, ErrNotStarted
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.PollInterval):
		}
	}
}

// openLog opens the log of pod's container; with follow, it follows it
// until the container ends.
func (s *PodSource) openLog(ctx context.Context, pod *corev1.Pod, container string, follow bool) (io.ReadCloser, error) {
	open := func(ctx context.Context, follow bool) (io.ReadCloser, error) {
		opts := &corev1.PodLogOptions{Container: container, Follow: follow}
		return s.Pods.Pods(s.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	}
	if !follow || containerEnded(pod, container) {
		// An ended container's log is complete: nothing to follow.
		return open(ctx, false)
	}
	ended := func(ctx context.Context) (bool, error) {
		_, pod, err := s.read(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && containerEnded(pod, container), err
	}
	gone := func(ctx context.Context, err error) string { return s.whyGone(ctx, pod, err) }
	return followUntilContainerEnds(ctx, s.PollInterval, open, ended, gone)
}

// read returns the run and the Pod of the attempt being read, nil while
// it has none.
func (s *PodSource) read(ctx context.Context) (*v1.TaskRun, *corev1.Pod, error) {
	run, err := s.getRun(ctx)
	if err != nil {
		return nil, nil, err
	}
	name := attemptPod(run, s.attemptOf(run))
	if name == "" {
		return run, nil, nil
	}
	pod := &corev1.Pod{}
	err = s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return run, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return run, pod, nil
}

func (s *PodSource) getRun(ctx context.Context) (*v1.TaskRun, error) {
	run := &v1.TaskRun{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Run}, run); err != nil {
		return nil, err
	}
	return run, nil
}

// containerOf returns the container of pod that runs step; false while
// there is no Pod, or it runs no such step.
func containerOf(pod *corev1.Pod, step string) (string, bool) {
	if pod == nil {
		return "", false
	}
	for _, s := range runstate.Steps(pod) {
		if s.Name == step {
			return s.Container, true
		}
	}
	return "", false
}

// stepStarted reports whether the step that pod's container runs has
// started, so that its log is the step's own. A chained Pod's steps' containers
// all run from the Pod's start, most of them waiting for their turn and
// writing nothing: such a step has started only once its turn has come, as
// the controller reads it (runpod.StepStates), and reading the log of one
// whose turn has not come would show the step as run, with no line.
func stepStarted(pod *corev1.Pod, container string) bool {
	if !containerStarted(pod, container) {
		return false
	}
	if !runstate.Chained(pod) {
		return true
	}
	states := runpod.StepStates(pod)
	for i, s := range runstate.Steps(pod) {
		if s.Container == container {
			return states[i].State != v1.StepWaiting
		}
	}
	return false
}

// containerStarted reports whether the kubelet has started the container, so
// that it has a log to read.
func containerStarted(pod *corev1.Pod, name string) bool {
	cs := containerStatus(pod, name)
	return cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil)
}

// containerStatus returns the status of pod's container named name, nil
// before the kubelet has reported one.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func podEnded(pod *corev1.Pod) bool {
	return pod != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}
