package rundecision

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file decides status.taskSpec, the spec every attempt of a run runs
// (API.md, "Pinned task spec"; docs/lifecycle.md, "Which spec a run runs"):
// written once, in the first status write that records a Pod, and never
// changed after (the stash guard refuses a write that would change it).

// PodTaskToPin returns the version of the Task to pin, for a run that runs
// its Task as read and has no pin yet, whose Pod this reconcile found and
// names the Task it was built from (runstate.AnnotationTaskVersion): the
// reconcile that created the Pod left the run's status to this one
// (StartedFirstPod). The controller reads that Task and hands it to
// PinPodTask. A Pod that names none (one that release 6 created) asks for
// nothing: its run is pinned when its next Pod is created.
func (a *Attempt) PodTaskToPin() (runstate.TaskVersion, bool) {
	if a.Pod == nil || a.CreatedPod || !runstate.NeedsTask(a.Run) {
		return runstate.TaskVersion{}, false
	}
	return runstate.PodTaskVersion(a.Pod)
}

// PinPodTask pins task's spec, task being the Task the attempt's Pod was
// built from, as PodTaskToPin named it. It pins at once, before the
// stages that follow: a retry in this reconcile builds its Pod from the pin.
func (a *Attempt) PinPodTask(task *v1.Task) {
	if a.Run.Status.TaskSpec == nil && runstate.NeedsTask(a.Run) {
		a.Run.Status.TaskSpec = task.Spec.DeepCopy()
	}
}

// pinTaskSpec sets status.taskSpec, in a status write that records a Pod,
// if the run has none yet: an inline run's own spec, whichever write that
// is; else the spec of the Task this reconcile built the Pod from, when
// this reconcile writes the status (a retry's Pod, or a first one whose
// start could not wait: StartedFirstPod). A run with no pin whose Pod this
// reconcile did not build, and names no Task (one that release 6 started,
// or whose Task's version the API server no longer keeps), is pinned when
// its next Pod is created: the Task as read now may not be what its Pod
// runs.
func (a *Attempt) pinTaskSpec() {
	st := &a.Run.Status
	switch {
	case st.TaskSpec != nil || a.Pod == nil:
	case a.Run.Spec.TaskSpec != nil:
		st.TaskSpec = a.Run.Spec.TaskSpec.DeepCopy()
	case a.CreatedPod && a.Task != nil:
		st.TaskSpec = a.Task.Spec.DeepCopy()
	}
}
