package runstate

import (
	"math"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file is all the arithmetic of a run's timeout: when the run times out,
// when the controller looks at it again, and the activeDeadlineSeconds that
// the kubelet counts down on its Pod.

// DefaultTimeout is the timeout of a run whose spec.timeouts.total is absent, unless
// the manager's --default-timeout sets another.
const DefaultTimeout = time.Hour

// deadlineSlack is how long before the run's deadline, by the controller's
// clock, a Pod stopped at its activeDeadlineSeconds still counts as timed out:
// the kubelet counts on its own clock, from when it took the Pod up, in whole
// seconds.
const deadlineSlack = 5 * time.Second

// Timeout returns run's timeout: its spec.timeouts.total, else defaultTimeout. 0
// means none, and so does a negative duration.
func Timeout(run *v1.TaskRun, defaultTimeout time.Duration) time.Duration {
	timeout := defaultTimeout
	if run.Spec.Timeouts.Total != nil {
		timeout = run.Spec.Timeouts.Total.Duration
	}
	return max(timeout, 0)
}

// Deadline is when a run times out: its start plus its timeout. The zero
// Deadline is none, that of a run without timeout.
type Deadline struct {
	at  time.Time
	set bool
}

// DeadlineFor returns the deadline of a run that started at start, none for
// a timeout of 0.
func DeadlineFor(start time.Time, timeout time.Duration) Deadline {
	if timeout <= 0 {
		return Deadline{}
	}
	return Deadline{at: start.Add(timeout), set: true}
}

// Time returns when the run times out, and false when it never does.
func (d Deadline) Time() (time.Time, bool) {
	return d.at, d.set
}

// Passed reports whether the run has timed out by now.
func (d Deadline) Passed(now time.Time) bool {
	return d.set && !now.Before(d.at)
}

// StoppedPod reports whether a Pod that the kubelet stopped at its
// activeDeadlineSeconds, seen at now, was stopped by this deadline rather than
// by one that someone else set: the kubelet's count may end a few seconds
// before the deadline by the controller's clock.
func (d Deadline) StoppedPod(now time.Time) bool {
	return d.set && !now.Before(d.at.Add(-deadlineSlack))
}

// RecheckIn is how long the run has left, so that a run still going is
// looked at again when it times out: at least a second once the deadline has
// passed, and 0 for a run that never times out.
func (d Deadline) RecheckIn(now time.Time) time.Duration {
	if !d.set {
		return 0
	}
	if left := d.at.Sub(now); left > 0 {
		return left
	}
	return time.Second
}

// ActiveDeadlineSeconds returns the activeDeadlineSeconds of a Pod created at
// now: what is left until the deadline, rounded up so that the Pod never stops
// before the run times out, and within the range the API server accepts. It is
// nil for a run that never times out.
func (d Deadline) ActiveDeadlineSeconds(now time.Time) *int64 {
	if !d.set {
		return nil
	}
	remaining := math.Ceil(d.at.Sub(now).Seconds())
	seconds := int64(min(max(remaining, 1), math.MaxInt32))
	return &seconds
}

// StoppingDeadlineSeconds returns the activeDeadlineSeconds that stops at once
// a Pod that the kubelet started at started: the whole seconds since then, so
// that its deadline already lies in the past. The API server accepts no value
// below 1.
func StoppingDeadlineSeconds(started, now time.Time) int64 {
	elapsed := int64(now.Sub(started).Seconds())
	return max(elapsed, 1)
}

// TTLAfterFinished returns how long after it finished run is deleted: its
// spec.ttlSecondsAfterFinished (0: as soon as it finishes), else defaultTTL,
// the manager's --default-ttl-after-finished. It returns false when the run
// is kept: no TTL of its own and a defaultTTL of 0 (or less).
func TTLAfterFinished(run *v1.TaskRun, defaultTTL time.Duration) (time.Duration, bool) {
	if ttl := run.Spec.TTLSecondsAfterFinished; ttl != nil {
		return time.Duration(max(*ttl, 0)) * time.Second, true
	}
	return defaultTTL, defaultTTL > 0
}

// FinishedAt returns when run finished: its completionTime, else, for a run
// that a v1alpha1 writer finished without one, when its condition last
// changed. It returns false for a run that goes on.
func FinishedAt(run *v1.TaskRun) (time.Time, bool) {
	if !Finished(run) {
		return time.Time{}, false
	}
	if run.Status.CompletionTime != nil {
		return run.Status.CompletionTime.Time, true
	}
	return Succeeded(run).LastTransitionTime.Time, true
}

// ExpiresAt returns when the controller deletes run: TTLAfterFinished after
// FinishedAt. It returns false for a run that goes on or is kept.
func ExpiresAt(run *v1.TaskRun, defaultTTL time.Duration) (time.Time, bool) {
	finished, ok := FinishedAt(run)
	if !ok {
		return time.Time{}, false
	}
	ttl, ok := TTLAfterFinished(run, defaultTTL)
	if !ok {
		return time.Time{}, false
	}
	return finished.Add(ttl), true
}
