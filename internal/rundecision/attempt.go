package rundecision

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// Attempt is what one reconcile knows of a run's current attempt: what it
// read (the facts, set by the controller), and what the decisions made of
// them so far (Outcome, RecheckIn, MountHeld, WaitsForFence). The decisions
// rewrite Run's status in place (RecordAttempt, ApplyStatus).
type Attempt struct {
	// Run is the TaskRun, as read, then as the decisions rewrite its status.
	Run *v1.TaskRun
	// Now is the one reading of the clock that the whole reconcile uses.
	Now time.Time
	// Timeout is the run's timeout; 0 means none.
	Timeout time.Duration

	// PodName is the name of the Pod of the run's current attempt, and
	// Claimed says that status.podName already names it: a run whose
	// claimed Pod is missing lost it, while one whose Pod is not claimed
	// yet still has to get it (CurrentPodName).
	PodName string
	Claimed bool
	// Pod is the Pod of the run's current attempt, once found or created.
	Pod *corev1.Pod
	// OtherPod holds the run's Pod name but is controlled by something else.
	OtherPod *corev1.Pod
	// Node is what the Pod's node makes of the Pod, if its node has a say
	// (runpod.JudgedByNode): lost with it, or not ready.
	Node *nodefault.Verdict
	// CreatedPod says that this reconcile created Pod.
	CreatedPod bool
	// Task is the Task whose spec the attempt's Pod is built from
	// (runstate.TaskToRun: pinned, inline, or the one read), once
	// TaskFound found it.
	Task *v1.Task

	// Outcome is the Succeeded condition, once a decision has made it.
	Outcome *Outcome
	// RecheckIn, when not 0, is how soon the run must be looked at again
	// for a reason other than its deadline (an image pull's timeout).
	RecheckIn time.Duration
	// MountHeld is the volume the kubelet cannot mount for the Pod, which
	// the Pending message names.
	MountHeld *runpod.Hold
	// WaitsForFence says that the attempt is lost with a node that is not
	// fenced, and the next one waits (AfterEnd).
	WaitsForFence bool

	// steps are runpod.StepStates(stepsOf) as stepsOf stood at stepsVersion.
	steps        []v1.StepState
	stepsOf      *corev1.Pod
	stepsVersion string
}

// NewAttempt is the attempt a reconcile of run at now starts from: the
// current attempt's Pod named, nothing read of it yet.
func NewAttempt(run *v1.TaskRun, now time.Time, defaultTimeout time.Duration) *Attempt {
	a := &Attempt{Run: run, Now: now, Timeout: runstate.Timeout(run, defaultTimeout)}
	a.ForgetPod()
	return a
}

// ForgetPod names the current attempt's Pod anew (CurrentPodName) and
// forgets what was read of the one before: a retry moves on to the next
// attempt's.
func (a *Attempt) ForgetPod() {
	a.PodName, a.Claimed = CurrentPodName(a.Run)
	a.Pod, a.OtherPod, a.Node = nil, nil, nil
}

// CurrentPodName returns the name of the Pod of run's current attempt, the
// attempt after len(status.attempts) failed ones, and whether status.podName
// already names it. The first attempt's Pod is the one status.podName names
// (one that an earlier release started, say), else runstate.PodName; a
// later one's name is derived from the attempt's number alone, so that a
// reconcile that crashed after creating it is followed by one that finds it.
func CurrentPodName(run *v1.TaskRun) (string, bool) {
	attempt := len(run.Status.Attempts)
	if attempt == 0 && run.Status.PodName != "" {
		return run.Status.PodName, true
	}
	name := runstate.AttemptPodName(run, attempt)
	return name, run.Status.PodName == name
}

// Decided reports whether a decision has made the run's outcome, so that the
// stages after it are skipped.
func (a *Attempt) Decided() bool { return a.Outcome != nil }

// StartTime is when the run started: as recorded; else, when a crash kept an
// earlier reconcile from recording it after creating the Pod, when the Pod
// was created; else now. Times are kept in whole seconds, as the API stores them.
func (a *Attempt) StartTime() time.Time {
	switch {
	case a.Run.Status.StartTime != nil:
		return a.Run.Status.StartTime.Time
	case a.Pod != nil && !a.CreatedPod && a.Pod.CreationTimestamp.Time.Before(a.Now):
		return a.Pod.CreationTimestamp.Time
	default:
		return a.Now.Truncate(time.Second)
	}
}

// Deadline is when the run times out.
func (a *Attempt) Deadline() runstate.Deadline {
	return runstate.DeadlineFor(a.StartTime(), a.Timeout)
}

// TimedOut reports whether the run's deadline has passed.
func (a *Attempt) TimedOut() bool {
	return a.Deadline().Passed(a.Now)
}

// UntilDeadline is how long the run has left, for a run that goes on and has
// a timeout, so that it is reconciled again at its deadline; else 0.
func (a *Attempt) UntilDeadline() time.Duration {
	if a.Outcome.Finished() {
		return 0
	}
	return a.Deadline().RecheckIn(a.Now)
}

// RequeueAfter is when a run that goes on is reconciled again though nothing
// about it changes: at its deadline, or sooner at a recheck a decision asked
// for; 0 for neither.
func (a *Attempt) RequeueAfter() time.Duration {
	after := a.UntilDeadline()
	if a.Outcome.Finished() || a.RecheckIn <= 0 {
		return after
	}
	if after == 0 {
		return a.RecheckIn
	}
	return min(after, a.RecheckIn)
}

// RecheckWithin asks that the run be reconciled again within d at the latest.
func (a *Attempt) RecheckWithin(d time.Duration) {
	if a.RecheckIn <= 0 || d < a.RecheckIn {
		a.RecheckIn = d
	}
}

// Steps returns runpod.StepStates(a.Pod), nil without a Pod, reading the
// Pod's container statuses and termination messages once for each version of
// it the reconcile holds: a decision reads them, and the status reports them.
func (a *Attempt) Steps() []v1.StepState {
	if a.Pod == nil {
		return nil
	}
	if a.stepsOf != a.Pod || a.stepsVersion != a.Pod.ResourceVersion {
		a.steps, a.stepsOf, a.stepsVersion = runpod.StepStates(a.Pod), a.Pod, a.Pod.ResourceVersion
	}
	return a.steps
}

// StartedFirstPod reports whether this reconcile created the first Pod of a
// run whose start original (the run as read) does not record yet: a start
// that nothing else in the reconcile changed, which the next reconcile can
// record as well. (A Pod is created only when status.podName names none: a
// named Pod that is missing ends the run instead.) A run that runs its
// Task's spec as read is one only if its Pod names that Task's version
// (runstate.AnnotationTaskVersion), from which the next reconcile pins the
// spec (PodTaskToPin); else its status pins the spec now.
func (a *Attempt) StartedFirstPod(original *v1.TaskRun) bool {
	st := original.Status
	if !a.CreatedPod || st.StartTime != nil || len(st.Attempts) != 0 || a.Outcome.Finished() {
		return false
	}
	_, named := runstate.PodTaskVersion(a.Pod)
	return named || !runstate.NeedsTask(original)
}
