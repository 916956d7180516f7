//go:build e2e

package e2e

import (
	"testing"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// TestRunSemantics runs release 3's run semantics (issue 15) on a local
// cluster for each Pod shape the manager builds (--pod-shape): a run whose
// first Pod is evicted is retried and succeeds (retry_eviction_test.go),
// and kwok's stages end script steps as the controller's wrapper does, so
// that results and onError: continue work end to end (results_test.go);
// steps run one at a time, in order, a failing step stopping the rest, and
// a run times out or is cancelled mid-step (pod_shapes_test.go); a run with
// sidecars succeeds, reporting them (sidecars_test.go). With this
// release's default shape, init containers, a run with a time to live is
// deleted with its Pod when it has passed (ttl_test.go), and so do v1's
// typed params, applied from the samples (typed_params_test.go): neither
// depends on the shape. With the chained shape, a Task it cannot keep its
// promises for falls back to init containers. The checks of a shape share
// its cluster and run at once; the test runs beside the upgrade rehearsals,
// since most of it is the garbage collector's wait (cascade_test.go).
func TestRunSemantics(t *testing.T) {
	t.Parallel()
	for _, shape := range []struct{ name, cluster string }{
		{runstate.PodShapeInitContainers, "run-semantics"},
		{runstate.PodShapeChained, "run-semantics-chained"},
	} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, shape.cluster)
			startManager(t, c, "--pod-shape="+shape.name)
			chained := shape.name == runstate.PodShapeChained
			gcWatchesTaskRuns := func() {}
			if !chained {
				gcWatchesTaskRuns = probeGarbageCollector(t, c)
			}

			t.Run("evicted Pod retried", func(t *testing.T) {
				t.Parallel()
				checkRetryAfterEviction(t, c)
			})
			t.Run("results and onError", func(t *testing.T) {
				t.Parallel()
				checkResultsAndOnError(t, c)
			})
			t.Run("steps one at a time", func(t *testing.T) {
				t.Parallel()
				checkStepsOneAtATime(t, c, chained)
			})
			t.Run("timeout and cancel", func(t *testing.T) {
				t.Parallel()
				checkTimeoutAndCancel(t, c, chained)
			})
			t.Run("sidecars", func(t *testing.T) {
				t.Parallel()
				checkSidecars(t, c, chained)
			})
			if chained {
				t.Run("command step falls back to init containers", func(t *testing.T) {
					t.Parallel()
					checkFallback(t, c)
				})
				return
			}
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
		})
	}
}
