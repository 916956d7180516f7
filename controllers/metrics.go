package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's metrics, on the manager's metrics endpoint: each is
// recorded once per transition, by observeTransition, and by deleteIfExpired.
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
