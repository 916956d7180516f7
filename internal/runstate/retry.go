package runstate

import v1 "github.com/minitask-dev/minitask/apis/v1"

// This file is what a run's retries allow: how many attempts it may make, and
// which failures it retries. The controller retries by these rules and
// kubectl task shows them, so "attempt 2 of 3" means the same to both.

// DefaultRetryOn returns what a run without spec.retryOn retries: a Pod that
// failed for a reason other than a step (evicted, its node lost, deleted),
// which running the same steps again may well get past. It is a new slice
// each time, so that no caller can change the default for the others.
func DefaultRetryOn() []v1.RetryReason {
	return []v1.RetryReason{v1.RetryOnPodFailed}
}

// RetryOn returns the failures that run retries: its spec.retryOn, else
// DefaultRetryOn.
func RetryOn(run *v1.TaskRun) []v1.RetryReason {
	if len(run.Spec.RetryOn) == 0 {
		return DefaultRetryOn()
	}
	return run.Spec.RetryOn
}

// AttemptsAllowed returns how many attempts run may make: its spec.retries
// plus the first. Absent retries, and a negative count the API refuses
// anyway, allow the first attempt alone.
func AttemptsAllowed(run *v1.TaskRun) int {
	if run.Spec.Retries == nil {
		return 1
	}
	return int(max(*run.Spec.Retries, 0)) + 1
}
