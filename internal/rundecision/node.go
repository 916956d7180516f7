package rundecision

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is what a run makes of its Pod's node failing (docs/lifecycle.md,
// "Node faults"), as internal/nodefault judges it: a Pod lost with its node
// ends the attempt PodFailed naming the node; a retry waits until the old Pod
// cannot still run; a run that ends says where its Pod may go on.

// StepReasonNodeLost is the reason of each step that had not ended when its
// run ended with its Pod lost with its node.
const StepReasonNodeLost = "NodeLost"

// NodeJudged records v, what the attempt's Pod's node makes of it. A Pod on
// a node that is not ready yet for long enough to be lost asks for the run
// to be looked at again when it will be: nothing else would tell.
func (a *Attempt) NodeJudged(v nodefault.Verdict) {
	a.Node = &v
	if v.LostIn > 0 {
		a.RecheckWithin(v.LostIn)
	}
}

// lostWithNode is the outcome of an attempt whose Pod is lost with its node
// (a.Node): PodFailed, naming the node and why. A run cancelled or timed out
// meanwhile ends so instead, as it would with its Pod deleted, saying that
// the Pod may still run (mayStillRun).
func (a *Attempt) lostWithNode() *Outcome {
	switch {
	case runstate.CancelRequested(a.Run):
		return a.mayStillRun(Cancelled(a.Run))
	case a.TimedOut():
		return a.mayStillRun(TimedOut(a.Run, a.Timeout))
	}
	return Failed(v1.ReasonPodFailed, "Pod %q was lost with its node %q: %s", a.PodName, a.Node.Node, a.Node.Why)
}

// mayStillRun adds to o, the end of a run the controller stops, that the
// run's Pod may still be running where no kubelet can stop it: on a node
// that is not ready, and not fenced. A Pod with no such node is stopped by
// its kubelet, or runs nowhere.
func (a *Attempt) mayStillRun(o *Outcome) *Outcome {
	if a.Node == nil || !a.Node.NotReady {
		return o
	}
	o.Message += fmt.Sprintf("; its Pod %q may still be running on node %q, which is not ready: no kubelet could stop it", a.PodName, a.Node.Node)
	return o
}

// waitForFence is the outcome of a run whose attempt's Pod is lost with a
// node that is not fenced, and that retries that failure (o): Retrying, the
// message saying how the attempt failed and what the next attempt waits
// for. Another attempt's Pod now could run beside this one, which may go on
// behind a network partition, or when its node comes back.
func (a *Attempt) waitForFence(o *Outcome) *Outcome {
	n := len(a.Run.Status.Attempts)
	return Unknown(v1.ReasonRetrying,
		"attempt %d of %d failed (%s): %s; attempt %d's Pod %q may still be running on node %q, which is not ready: "+
			"waiting for the node to be deleted, tainted %s, or the Pod to be gone before attempt %d",
		n+1, runstate.AttemptsAllowed(a.Run), o.Reason, o.Message, n+1, a.PodName, a.Node.Node, corev1.TaintNodeOutOfService, n+2)
}

// nodeNotReady adds to o, a run's progress, that its Pod's node is not ready
// (and so that what the Pod's status says of its steps may be stale).
func (a *Attempt) nodeNotReady(o *Outcome) *Outcome {
	if a.Node == nil || !a.Node.NotReady || o.Finished() {
		return o
	}
	o.Message += fmt.Sprintf("; node %q: %s", a.Node.Node, a.Node.Why)
	return o
}

// lostPodRuns reports whether the attempt's Pod is lost with its node and
// may yet run there: a run that ends then stops it, as it stops any Pod, for
// a kubelet that comes back, which then kills the Pod rather than go on with
// a run that has ended. A Pod already being deleted, or failed, needs
// nothing.
func (a *Attempt) lostPodRuns() bool {
	return a.Pod != nil && a.Pod.DeletionTimestamp == nil && a.Node.Lost() && a.Pod.Status.Phase != corev1.PodFailed
}

// markStepsLost reports every step of a run that ended with its Pod lost
// with its node, and that had not ended, as Terminated with the reason
// NodeLost, and neither an exit code nor an end: no kubelet will say how or
// when it ended, and the run, final, is never written again, so a Running
// or Waiting step would claim for ever that it may yet run.
func markStepsLost(steps []v1.StepState) {
	for i := range steps {
		if steps[i].State != v1.StepTerminated {
			steps[i].State, steps[i].Reason = v1.StepTerminated, StepReasonNodeLost
		}
	}
}
