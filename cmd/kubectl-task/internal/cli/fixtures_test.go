package cli_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// history fills h's namespace, where no controller runs, with the Task greet,
// the Task quiet that has no runs, and a run in each state, their statuses
// and Events written as the controller would, at fixed times before h.now:
//
//	greet-old      Succeeded, 3h ago, took 2m5s
//	greet-failed   Failed(StepFailed), 1h ago, took 12s; with Events
//	lost-run       WaitingForTask (its Task "gone" does not exist), 5m ago
//	greet-running  Running its second step, 30s ago
//	greet-new      not yet seen by the controller
func (h *harness) history(t *testing.T) {
	t.Helper()
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(h.now.Add(d))) }
	step := func(name string, code int32, from, to time.Duration) v1.StepState {
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		return v1.StepState{Name: name, State: v1.StepTerminated, ExitCode: ptr.To(code), Reason: reason, StartedAt: at(from), FinishedAt: at(to)}
	}
	condition := func(status metav1.ConditionStatus, reason v1.TaskRunReason, message string, when time.Duration) []metav1.Condition {
		return []metav1.Condition{{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason), Message: message,
			ObservedGeneration: 1, LastTransitionTime: *at(when)}}
	}
	h.Create(t, greetTask("greet"), greetTask("quiet"),
		wrappers.TaskRun("", "greet-old", "greet").Param("greeting", "hello").Param("name", "you").Obj(),
		wrappers.TaskRun("", "greet-failed", "greet").Param("greeting", "hi").Timeout(10*time.Minute).Obj(),
		wrappers.TaskRun("", "lost-run", "gone").Obj(),
		wrappers.TaskRun("", "greet-running", "greet").Param("greeting", "hey").Obj())

	h.setRunStatus(t, "greet-old", v1.TaskRunStatus{
		Conditions: condition(metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0", -3*time.Hour+125*time.Second),
		PodName:    "greet-old-pod", StartTime: at(-3 * time.Hour), CompletionTime: at(-3*time.Hour + 125*time.Second),
		Steps: []v1.StepState{step("prepare", 0, -3*time.Hour, -3*time.Hour+5*time.Second),
			step("say", 0, -3*time.Hour+5*time.Second, -3*time.Hour+2*time.Minute)},
	})
	h.setRunStatus(t, "greet-failed", v1.TaskRunStatus{
		Conditions: condition(metav1.ConditionFalse, v1.ReasonStepFailed, `step "say" exited with code 3`, -time.Hour+12*time.Second),
		PodName:    "greet-failed-pod", StartTime: at(-time.Hour), CompletionTime: at(-time.Hour + 12*time.Second),
		Steps: []v1.StepState{step("prepare", 0, -time.Hour+time.Second, -time.Hour+4*time.Second),
			step("say", 3, -time.Hour+4*time.Second, -time.Hour+11*time.Second)},
	})
	h.setRunStatus(t, "lost-run", v1.TaskRunStatus{
		Conditions: condition(metav1.ConditionUnknown, v1.ReasonWaitingForTask, `waiting for Task "gone", which does not exist`, -5*time.Minute),
		StartTime:  at(-5 * time.Minute),
	})
	h.setRunStatus(t, "greet-running", v1.TaskRunStatus{
		Conditions: condition(metav1.ConditionUnknown, v1.ReasonRunning, `running step "say" (2 of 2)`, -25*time.Second),
		PodName:    "greet-running-pod", StartTime: at(-30 * time.Second),
		Steps: []v1.StepState{step("prepare", 0, -30*time.Second, -25*time.Second),
			{Name: "say", State: v1.StepRunning, StartedAt: at(-20 * time.Second)}},
	})
	// Created last, so that it is the newest: a run not seen yet has no start time.
	h.Create(t, wrappers.TaskRun("", "greet-new", "greet").Param("greeting", "yo").Obj())

	failedRun := h.TaskRun(t, "greet-failed")
	event := func(name, kind, object string, uid string, typ, reason, message string, when time.Duration, count int32) *corev1.Event {
		return &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: h.NS, Name: object, UID: types.UID(uid),
				APIVersion: map[string]string{"TaskRun": "minitask.dev/v1beta1", "Pod": "v1"}[kind]},
			Type: typ, Reason: reason, Message: message, Count: count,
			FirstTimestamp: *at(when), LastTimestamp: *at(when),
			Source: corev1.EventSource{Component: "minitask-controller"},
		}
	}
	h.Create(t,
		event("greet-failed.1", "TaskRun", "greet-failed", string(failedRun.UID), corev1.EventTypeNormal, "Started", "created Pod greet-failed-pod", -time.Hour, 1),
		event("greet-failed.2", "Pod", "greet-failed-pod", "", corev1.EventTypeNormal, "Pulled", `Container image "alpine:3" already present on machine`, -time.Hour+4*time.Second, 2),
		event("greet-failed.3", "TaskRun", "greet-failed", string(failedRun.UID), corev1.EventTypeWarning, "Failed", `step "say" exited with code 3`, -time.Hour+12*time.Second, 1),
		// An Event about another object is not the run's.
		event("greet-old.1", "TaskRun", "greet-old", "", corev1.EventTypeNormal, "Succeeded", "every step exited 0", -3*time.Hour, 1),
	)
}
