package rundecision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestTransition(t *testing.T) {
	condition := func(status metav1.ConditionStatus, reason v1.TaskRunReason, message string) *metav1.Condition {
		return &metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason), Message: message}
	}
	pending := condition(metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`)
	running := condition(metav1.ConditionUnknown, v1.ReasonRunning, `running step "a" (1 of 2)`)
	type want struct {
		Event    Event
		Recorded bool
	}
	tests := map[string]struct {
		before, after *metav1.Condition
		want          want
	}{
		"first seen, pending: nothing (the start is recorded otherwise)": {after: pending},
		"first seen, running": {after: running, want: want{Event{corev1.EventTypeNormal, EventRunning, "Run"}, true}},
		"a step started":      {before: pending, after: running, want: want{Event{corev1.EventTypeNormal, EventRunning, "Run"}, true}},
		"the next step: the same reason, another message": {
			before: running, after: condition(metav1.ConditionUnknown, v1.ReasonRunning, `running step "b" (2 of 2)`),
		},
		"succeeded": {
			before: running, after: condition(metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"),
			want: want{Event{corev1.EventTypeNormal, EventSucceeded, "Complete"}, true},
		},
		"timed out": {
			before: running, after: condition(metav1.ConditionFalse, v1.ReasonTimeout, "late"),
			want: want{Event{corev1.EventTypeWarning, EventTimedOut, "Stop"}, true},
		},
		"cancelled": {
			before: pending, after: condition(metav1.ConditionFalse, v1.ReasonCancelled, "stop"),
			want: want{Event{corev1.EventTypeNormal, EventCancelled, "Stop"}, true},
		},
		"a step failed": {
			before: running, after: condition(metav1.ConditionFalse, v1.ReasonStepFailed, `step "a" exited with code 1`),
			want: want{Event{corev1.EventTypeWarning, EventFailed, "Complete"}, true},
		},
		"an image not pulled": {
			before: pending, after: condition(metav1.ConditionFalse, v1.ReasonImagePullFailed, "no image"),
			want: want{Event{corev1.EventTypeWarning, EventFailed, "Complete"}, true},
		},
		"retrying: each failed attempt has its own Event": {
			before: running, after: condition(metav1.ConditionUnknown, v1.ReasonRetrying, "attempt 1 of 2 failed"),
		},
		"back to pending": {before: running, after: pending},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got want
			got.Event, got.Recorded = Transition(tc.before, tc.after)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
