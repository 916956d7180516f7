package controllers

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file records a run's transitions once its status patch has landed: an
// Event and a log line for each, and the metrics when the run finishes. A
// reconcile that changed nothing records nothing, so resyncs repeat none of it.

var (
	runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "minitask_taskrun_duration_seconds",
		Help: "How long finished TaskRuns took, from startTime to completionTime, by the reason they finished with.",
		// From a quick script to the default 1h timeout and past it.
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400},
	}, []string{"reason"})
	runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_taskruns_total",
		Help: "TaskRuns finished, by the reason they finished with.",
	}, []string{"reason"})
	attemptsRetried = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "minitask_taskrun_retries_total",
		Help: "Attempts of TaskRuns that failed and were followed by another, by the reason they failed with.",
	}, []string{"reason"})
	runsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "minitask_taskruns_deleted_total",
		Help: "Finished TaskRuns the controller deleted once their time to live had passed.",
	})
)

func init() {
	// Registered once per process: tests start several managers in turn.
	metrics.Registry.MustRegister(runDuration, runsTotal, attemptsRetried, runsDeleted)
}

// Event reasons, one per transition of a run.
const (
	eventStarted   = "Started"
	eventRunning   = "Running"
	eventSucceeded = "Succeeded"
	eventFailed    = "Failed"
	eventTimedOut  = "TimedOut"
	eventCancelled = "Cancelled"
	eventRetrying  = "Retrying"

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
	after := meta.FindStatusCondition(s.run.Status.Conditions, v1.ConditionSucceeded)

	if s.original.Status.StartTime == nil {
		// The reconcile that created the Pod of a new run leaves its start
		// to the next one (startedFirstPod): a Pod the status did not name
		// yet is the one the controller created.
		note := after.Message
		if s.pod != nil && !s.claimed {
			note = "created Pod " + s.pod.Name
		}
		r.event(s, corev1.EventTypeNormal, eventStarted, "Start", note)
		logger.Info("TaskRun started", "pod", s.run.Status.PodName, "timeout", s.timeout.String())
	}
	r.observeRetries(s)
	if s.waitsForFence && (before == nil || before.Message != after.Message) {
		r.event(s, corev1.EventTypeWarning, eventNodeLost, "Wait", after.Message)
	}
	if before != nil && before.Status == after.Status && before.Reason == after.Reason {
		return
	}
	logger.Info("TaskRun changed", "status", after.Status, "reason", after.Reason, "message", after.Message)

	switch reason := v1.TaskRunReason(after.Reason); {
	case after.Status == metav1.ConditionUnknown && reason == v1.ReasonRetrying:
		// observeRetries recorded each failed attempt.
	case after.Status == metav1.ConditionUnknown && reason == v1.ReasonRunning:
		r.event(s, corev1.EventTypeNormal, eventRunning, "Run", after.Message)
	case after.Status == metav1.ConditionTrue:
		r.event(s, corev1.EventTypeNormal, eventSucceeded, "Complete", after.Message)
	case after.Status == metav1.ConditionFalse && reason == v1.ReasonTimeout:
		r.event(s, corev1.EventTypeWarning, eventTimedOut, "Stop", after.Message)
	case after.Status == metav1.ConditionFalse && reason == v1.ReasonCancelled:
		r.event(s, corev1.EventTypeNormal, eventCancelled, "Stop", after.Message)
	case after.Status == metav1.ConditionFalse:
		r.event(s, corev1.EventTypeWarning, eventFailed, "Complete", after.Message)
	}

	if s.outcome.finished() {
		seconds := s.run.Status.CompletionTime.Sub(s.run.Status.StartTime.Time).Seconds()
		runDuration.WithLabelValues(after.Reason).Observe(seconds)
		runsTotal.WithLabelValues(after.Reason).Inc()
		logger.Info("TaskRun finished", "reason", after.Reason, "durationSeconds", seconds)
	}
}

// observeRetries records each attempt that the reconcile's status patch
// added to status.attempts: an Event and the retries metric (endOrRetry
// logged it when it recorded it).
func (r *TaskRunReconciler) observeRetries(s *runScope) {
	attempts := s.run.Status.Attempts
	for i := len(s.original.Status.Attempts); i < len(attempts); i++ {
		// The next attempt's Pod is named by its number, whether or not
		// it could be created yet.
		next := runstate.AttemptPodName(s.run, i+1)
		note := attemptFailed(s.run, i)
		if next != attempts[i].PodName {
			note = fmt.Sprintf("%s; attempt %d runs in Pod %s", note, i+2, next)
		}
		r.event(s, corev1.EventTypeWarning, eventRetrying, "Retry", note)
		attemptsRetried.WithLabelValues(attempts[i].Reason).Inc()
	}
}

// event emits one Event about the run, related to its Pod if it has one.
func (r *TaskRunReconciler) event(s *runScope, eventType, reason, action, note string) {
	var related runtime.Object
	if s.pod != nil {
		related = s.pod
	}
	r.Recorder.Eventf(s.run, related, eventType, reason, action, "%s", truncate(note, maxEventNote))
}
