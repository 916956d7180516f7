package conversion

import "testing"

// TestV1RoundTrips is TestRoundTrips with v1 as the hub: every kind through
// each spoke, both ways, roundTripsPerCase random objects each, typed params
// and timeouts.pending among them. A hub object never carries the
// annotation; a spoke's carries it only when it must.
func TestV1RoundTrips(t *testing.T) {
	total, annotated := 0, 0
	count := func(n, a int) { total, annotated = total+n, annotated+a }
	t.Run("Task v1-v1alpha1-v1", func(t *testing.T) {
		count(checkRoundTrips(t, 11, (*objectGenerator).v1Task, ConvertTaskFromHub, ConvertTaskToHub, spokeMayCarryAnnotation))
	})
	t.Run("Task v1-v1beta1-v1", func(t *testing.T) {
		count(checkRoundTrips(t, 12, (*objectGenerator).v1Task, ConvertBetaTaskFromHub, ConvertBetaTaskToHub, spokeMayCarryAnnotation))
	})
	t.Run("Task v1alpha1-v1-v1alpha1", func(t *testing.T) {
		count(checkRoundTrips(t, 13, (*objectGenerator).alphaTaskOfV1, ConvertTaskToHub, ConvertTaskFromHub, hubNeverCarriesAnnotation))
	})
	t.Run("Task v1beta1-v1-v1beta1", func(t *testing.T) {
		count(checkRoundTrips(t, 14, (*objectGenerator).betaTaskOfV1, ConvertBetaTaskToHub, ConvertBetaTaskFromHub, hubNeverCarriesAnnotation))
	})
	t.Run("TaskRun v1-v1alpha1-v1", func(t *testing.T) {
		count(checkRoundTrips(t, 15, (*objectGenerator).v1TaskRun, ConvertTaskRunFromHub, ConvertTaskRunToHub, spokeMayCarryAnnotation))
	})
	t.Run("TaskRun v1-v1beta1-v1", func(t *testing.T) {
		count(checkRoundTrips(t, 16, (*objectGenerator).v1TaskRun, ConvertBetaTaskRunFromHub, ConvertBetaTaskRunToHub, spokeMayCarryAnnotation))
	})
	t.Run("TaskRun v1alpha1-v1-v1alpha1", func(t *testing.T) {
		count(checkRoundTrips(t, 17, (*objectGenerator).alphaTaskRunOfV1, ConvertTaskRunToHub, ConvertTaskRunFromHub, hubNeverCarriesAnnotation))
	})
	t.Run("TaskRun v1beta1-v1-v1beta1", func(t *testing.T) {
		count(checkRoundTrips(t, 18, (*objectGenerator).betaTaskRunOfV1, ConvertBetaTaskRunToHub, ConvertBetaTaskRunFromHub, hubNeverCarriesAnnotation))
	})
	t.Logf("%d random objects converted there and back through v1; %d middle objects needed the annotation", total, annotated)
}
