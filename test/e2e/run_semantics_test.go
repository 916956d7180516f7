//go:build e2e

package e2e

import (
	"testing"
)

// TestRunSemantics runs release 3's run semantics (issue 15) on one local
// cluster, with the manager as it ships: a run whose first Pod is evicted is
// retried and succeeds (retry_eviction_test.go), a run with a time to live
// is deleted with its Pod when it has passed (ttl_test.go), and kwok's
// stages end script steps as the controller's wrapper does, so that results
// and onError: continue work end to end (results_test.go), and so do v1's
// typed params, applied from the samples (typed_params_test.go). The four share
// the cluster and run at once; the test runs beside the upgrade rehearsals,
// since most of it is the garbage collector's wait (cascade_test.go).
func TestRunSemantics(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "run-semantics")
	startManager(t, c)
	gcWatchesTaskRuns := probeGarbageCollector(t, c)

	t.Run("evicted Pod retried", func(t *testing.T) {
		t.Parallel()
		checkRetryAfterEviction(t, c)
	})
	t.Run("results and onError", func(t *testing.T) {
		t.Parallel()
		checkResultsAndOnError(t, c)
	})
	t.Run("typed params", func(t *testing.T) {
		t.Parallel()
		checkTypedParams(t, c)
	})
	t.Run("time to live", func(t *testing.T) {
		t.Parallel()
		// A run deleted in the foreground before the collector watches
		// TaskRuns would stay until it does: that wait is not the TTL's.
		gcWatchesTaskRuns()
		checkTimeToLive(t, c)
	})
}
