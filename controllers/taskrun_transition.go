package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/rundecision"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file records a run's transitions once its status patch has landed: an
// Event and a log line for each, and the metrics when the run finishes. A
// reconcile that changed nothing records nothing, so resyncs repeat none of it.

const (
	// maxEventNote is the API server's limit on an Event's note.
	maxEventNote = 1024
)

// observeTransition records what the reconcile's status patch changed.
func (r *TaskRunReconciler) observeTransition(ctx context.Context, s *runScope) {
	if !s.written {
		return
	}
	logger := log.FromContext(ctx)
	before := meta.FindStatusCondition(s.original.Status.Conditions, v1.ConditionSucceeded)
	after := meta.FindStatusCondition(s.Run.Status.Conditions, v1.ConditionSucceeded)

	if s.original.Status.StartTime == nil {
		// The reconcile that created the Pod of a new run leaves its start
		// to the next one (StartedFirstPod): a Pod the status did not name
		// yet is the one the controller created.
		note := after.Message
		if s.Pod != nil && !s.Claimed {
			note = "created Pod " + s.Pod.Name
		}
		r.event(s, rundecision.Event{Type: corev1.EventTypeNormal, Reason: rundecision.EventStarted, Action: "Start"}, note)
		logger.Info("TaskRun started", "pod", s.Run.Status.PodName, "timeout", s.Timeout.String())
	}
	r.observeRetries(s)
	for _, note := range rundecision.SidecarRestarts(s.original.Status.Sidecars, s.Run.Status.Sidecars) {
		r.event(s, rundecision.Event{Type: corev1.EventTypeWarning, Reason: rundecision.EventSidecarRestarted, Action: "Restart"}, note)
	}
	if s.WaitsForFence && (before == nil || before.Message != after.Message) {
		r.event(s, rundecision.Event{Type: corev1.EventTypeWarning, Reason: rundecision.EventNodeLost, Action: "Wait"}, after.Message)
	}
	if before != nil && before.Status == after.Status && before.Reason == after.Reason {
		return
	}
	logger.Info("TaskRun changed", "status", after.Status, "reason", after.Reason, "message", after.Message)
	if e, ok := rundecision.Transition(before, after); ok {
		r.event(s, e, after.Message)
	}
	if s.Outcome.Finished() {
		seconds := s.Run.Status.CompletionTime.Sub(s.Run.Status.StartTime.Time).Seconds()
		runDuration.WithLabelValues(after.Reason).Observe(seconds)
		runsTotal.WithLabelValues(after.Reason).Inc()
		logger.Info("TaskRun finished", "reason", after.Reason, "durationSeconds", seconds)
	}
}

// observeRetries records each attempt that the reconcile's status patch
// added to status.attempts: an Event and the retries metric (endOrRetry
// logged it when it recorded it).
func (r *TaskRunReconciler) observeRetries(s *runScope) {
	attempts := s.Run.Status.Attempts
	for i := len(s.original.Status.Attempts); i < len(attempts); i++ {
		// The next attempt's Pod is named by its number, whether or not
		// it could be created yet.
		next := runstate.AttemptPodName(s.Run, i+1)
		note := rundecision.AttemptFailed(s.Run, i)
		if next != attempts[i].PodName {
			note = fmt.Sprintf("%s; attempt %d runs in Pod %s", note, i+2, next)
		}
		r.event(s, rundecision.Event{Type: corev1.EventTypeWarning, Reason: rundecision.EventRetrying, Action: "Retry"}, note)
		attemptsRetried.WithLabelValues(attempts[i].Reason).Inc()
	}
}

// event emits e about the run, related to its Pod if it has one.
func (r *TaskRunReconciler) event(s *runScope, e rundecision.Event, note string) {
	var related runtime.Object
	if s.Pod != nil {
		related = s.Pod
	}
	r.Recorder.Eventf(s.Run, related, e.Type, e.Reason, e.Action, "%s", rundecision.Truncate(note, maxEventNote))
}
