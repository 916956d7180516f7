package rundecision

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file decides which Event a run's transition is recorded with: one per
// change of its Succeeded condition's status or reason, so that a reconcile
// that changed nothing records nothing.

// Event reasons, one per transition of a run.
const (
	EventStarted   = "Started"
	EventRunning   = "Running"
	EventSucceeded = "Succeeded"
	EventFailed    = "Failed"
	EventTimedOut  = "TimedOut"
	EventCancelled = "Cancelled"
	EventRetrying  = "Retrying"
	// EventNodeLost is the Event reason of a run whose Pod is lost with its
	// node and which waits, before its next attempt, for that Pod to be
	// fenced.
	EventNodeLost = "NodeLost"
	// EventSidecarRestarted is the Event reason of a run whose sidecar the
	// kubelet restarted, after it exited (SidecarRestarts).
	EventSidecarRestarted = "SidecarRestarted"
)

// SidecarRestarts returns the note of an Event for each sidecar whose
// restartCount grew from before (the status as read) to after (as written):
// a sidecar that exits, while the steps run or before, is restarted by the
// kubelet, and the run goes on.
func SidecarRestarts(before, after []v1.SidecarState) []string {
	counts := make(map[string]int32, len(before))
	for _, s := range before {
		if s.RestartCount != nil {
			counts[s.Name] = *s.RestartCount
		}
	}
	var notes []string
	for _, s := range after {
		if s.RestartCount == nil || *s.RestartCount <= counts[s.Name] {
			continue
		}
		notes = append(notes, fmt.Sprintf("sidecar %q exited and was restarted by the kubelet (%d restarts so far)", s.Name, *s.RestartCount))
	}
	return notes
}

// Event is one Event about a run: its type, reason and action; its note is
// the condition's message.
type Event struct {
	Type, Reason, Action string
}

// Transition is the Event that records the change of a run's Succeeded
// condition from before (nil for none) to after, and false when the status
// and reason stayed, or the change is recorded otherwise (a retry: each
// failed attempt has its own Event).
func Transition(before, after *metav1.Condition) (Event, bool) {
	if before != nil && before.Status == after.Status && before.Reason == after.Reason {
		return Event{}, false
	}
	switch reason := v1.TaskRunReason(after.Reason); {
	case after.Status == metav1.ConditionUnknown && reason == v1.ReasonRunning:
		return Event{corev1.EventTypeNormal, EventRunning, "Run"}, true
	case after.Status == metav1.ConditionTrue:
		return Event{corev1.EventTypeNormal, EventSucceeded, "Complete"}, true
	case after.Status == metav1.ConditionFalse && reason == v1.ReasonTimeout:
		return Event{corev1.EventTypeWarning, EventTimedOut, "Stop"}, true
	case after.Status == metav1.ConditionFalse && reason == v1.ReasonCancelled:
		return Event{corev1.EventTypeNormal, EventCancelled, "Stop"}, true
	case after.Status == metav1.ConditionFalse:
		return Event{corev1.EventTypeWarning, EventFailed, "Complete"}, true
	}
	return Event{}, false
}
