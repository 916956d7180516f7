package rundecision

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds the outcomes a run can have: its Succeeded condition, one
// constructor for each row of docs/lifecycle.md's table that the controller
// itself decides (the rows the Pod decides are runpod's).

// Outcome is what a reconcile decided about a run: its Succeeded condition.
type Outcome struct {
	Status  metav1.ConditionStatus
	Reason  v1.TaskRunReason
	Message string
}

// Finished reports whether the outcome ends the run.
func (o *Outcome) Finished() bool {
	return o != nil && o.Status != metav1.ConditionUnknown
}

// Unknown is a run that goes on, for reason.
func Unknown(reason v1.TaskRunReason, format string, args ...any) *Outcome {
	return &Outcome{Status: metav1.ConditionUnknown, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Failed is a run that ended False, for reason.
func Failed(reason v1.TaskRunReason, format string, args ...any) *Outcome {
	return &Outcome{Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// FromPod is the outcome that the run's Pod gives it (internal/runpod), nil
// for none.
func FromPod(c *runpod.Condition) *Outcome {
	if c == nil {
		return nil
	}
	return &Outcome{Status: c.Status, Reason: c.Reason, Message: c.Message}
}

// WaitingForTask is a run whose Task does not exist (yet).
func WaitingForTask(run *v1.TaskRun) *Outcome {
	return Unknown(v1.ReasonWaitingForTask, "waiting for Task %q, which does not exist", run.Spec.TaskRef.Name)
}

// InvalidParams is a run whose params do not fit its Task's.
func InvalidParams(problems runstate.ParamProblems) *Outcome {
	return Failed(v1.ReasonInvalidParams, "%s", problems.String())
}

// TimedOut is a run whose deadline passed.
func TimedOut(run *v1.TaskRun, timeout time.Duration) *Outcome {
	return Failed(v1.ReasonTimeout, "TaskRun %q did not finish within %s", run.Name, timeout)
}

// StepTimedOut is a run whose step, named step, ran past its timeout.
func StepTimedOut(step string, timeout time.Duration) *Outcome {
	return Failed(v1.ReasonStepTimedOut, "step %q timed out after %s", step, timeout)
}

// Cancelled is a run whose spec asked for it to stop.
func Cancelled(run *v1.TaskRun) *Outcome {
	return Failed(v1.ReasonCancelled, "TaskRun %q was cancelled", run.Name)
}

// PodRejected is a run whose Pod the API server refuses for good.
func PodRejected(err error) *Outcome {
	return Failed(v1.ReasonPodFailed, "the API server rejected the Pod: %v", err)
}

// PodForbiddenBySecurity is a run whose Pod its namespace's Pod Security
// level refuses for what its steps ask (violation, PodSecurityViolation):
// the same Pod would be refused every time, and only the Task, or the
// namespace's level, can change that.
func PodForbiddenBySecurity(podName, violation string) *Outcome {
	return Failed(v1.ReasonPodConfigFailed, "Pod %q asks for what its namespace's Pod Security level forbids: %s", podName, violation)
}

// PodRefused is a run whose Pod the API server refused for a reason that
// can pass (ClassifyRefusal): the run waits, saying why.
func PodRefused(podName, cause string, err error) *Outcome {
	return Unknown(v1.ReasonPending, "Pod %q not created yet: %s; retrying: %v", podName, cause, err)
}

// PodTooLarge is a run whose Pod would be too large (runpod.Build).
func PodTooLarge(err *runpod.TooLargeError) *Outcome {
	return Failed(v1.ReasonInvalidParams, "%v; no Pod was created", err)
}

// PodDeleted is a run whose claimed Pod is gone.
func PodDeleted(podName string) *Outcome {
	return FromPod(runpod.Deleted(podName))
}

// PodNotOurs is a run whose Pod's name is taken by a Pod it does not control.
func PodNotOurs(podName string) *Outcome {
	return Failed(v1.ReasonPodFailed, "Pod %q already exists and is not controlled by this TaskRun", podName)
}
