package rundecision

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file decides what stands between a run and its Pod's creation: a Pod
// of its name that is not its own, its Task missing, its params not fitting
// the Task's. What the API server's refusal of the Pod means is refusal.go's.

// PodInTheWay decides the outcome of a run whose Pod name is taken by
// a.OtherPod, a Pod it does not control. An earlier TaskRun of the same
// name, deleted since, leaves its Pod to the garbage collector for a while:
// the run waits for it to go instead of failing a reused name, and looks
// again (no event would tell it: the cache holds no Pod that has ended, so
// the garbage collector's deletion of one is never seen). Any other Pod fails
// the run.
func (a *Attempt) PodInTheWay() *Outcome {
	pod := a.OtherPod
	if !ofEarlierRun(a.Run, pod) {
		return PodNotOurs(pod.Name)
	}
	a.RecheckWithin(recheckAfterWaiting(a.Now.Sub(a.Run.CreationTimestamp.Time)))
	return Unknown(v1.ReasonPending, "waiting for Pod %q of an earlier TaskRun named %q to be deleted", pod.Name, a.Run.Name)
}

// ofEarlierRun reports whether pod, which run does not control, is controlled
// by a TaskRun of run's name: an earlier one, deleted since, for no two
// TaskRuns of a namespace share a name at once.
func ofEarlierRun(run *v1.TaskRun, pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "TaskRun" && owner.Name == run.Name &&
		strings.HasPrefix(owner.APIVersion, v1.GroupVersion.Group+"/")
}

// TaskFound decides whether the run's Pod can be built, task being the
// Task its taskRef names as read (nil when it does not exist, or was not
// read: a run with a pinned or an inline spec runs that instead,
// runstate.TaskToRun): the run waits for a missing Task, or ends for params
// that do not fit its spec. Otherwise it returns the params' values, and
// a.Task is the Task the Pod is built from.
func (a *Attempt) TaskFound(task *v1.Task) (params.Values, *Outcome) {
	if !runstate.NeedsTask(a.Run) {
		task = nil
	}
	ran := runstate.TaskToRun(a.Run, task)
	if ran == nil {
		return params.Values{}, WaitingForTask(a.Run)
	}
	values, problems := runstate.ParamValues(ran, a.Run)
	if problems.Any() {
		return params.Values{}, InvalidParams(problems)
	}
	a.Task = ran
	return values, nil
}
