package controllers

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A reconcile that fails (a Pod that admission refused for now, say) is
// retried by the work queue, with a delay that doubles from retryBaseDelay
// with each failure of the same run, up to retryMaxDelay, and starts again
// from retryBaseDelay after a reconcile that succeeds. The base leaves time
// for what the refusal waits for (a ServiceAccount comes within a second of
// its namespace); the cap bounds how late a run notices that a full quota has
// room again, with a retry per run a minute at most.
const (
	retryBaseDelay = 100 * time.Millisecond
	retryMaxDelay  = time.Minute
)

// retryLimiter is the TaskRun controller's work queue rate limiter: the
// per-run exponential backoff above, except that the retry that follows
// retryBy comes no later than the deadline it gave, so that a run that waits
// for its Pod still times out on time.
type retryLimiter struct {
	backoff workqueue.TypedRateLimiter[reconcile.Request]
	now     func() time.Time

	mu sync.Mutex
	// deadlines holds, for each run whose next retry retryBy bounded, the
	// time by which it must come. When takes it out: it bounds one retry.
	deadlines map[reconcile.Request]time.Time
}

func newRetryLimiter(now func() time.Time) *retryLimiter {
	return &retryLimiter{
		// As controller-runtime's default limiter does, the overall bucket
		// (10 retries/s, bursts of 100) keeps a wave of failing runs from
		// hammering the API server; the per-run backoff is ours.
		backoff: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](retryBaseDelay, retryMaxDelay),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
		),
		now:       now,
		deadlines: map[reconcile.Request]time.Time{},
	}
}

// retryBy makes the next retry of run come no later than deadline.
func (l *retryLimiter) retryBy(run types.NamespacedName, deadline time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deadlines[reconcile.Request{NamespacedName: run}] = deadline
}

// When returns how long to wait before req is retried: its backoff, or less
// if that would pass the deadline retryBy gave.
func (l *retryLimiter) When(req reconcile.Request) time.Duration {
	delay := l.backoff.When(req)
	l.mu.Lock()
	deadline, bounded := l.deadlines[req]
	delete(l.deadlines, req)
	l.mu.Unlock()
	if bounded {
		delay = max(min(delay, deadline.Sub(l.now())), 0)
	}
	return delay
}

// Forget starts req's backoff again from retryBaseDelay.
func (l *retryLimiter) Forget(req reconcile.Request) {
	l.mu.Lock()
	delete(l.deadlines, req)
	l.mu.Unlock()
	l.backoff.Forget(req)
}

// NumRequeues is how many times in a row req has failed.
func (l *retryLimiter) NumRequeues(req reconcile.Request) int {
	return l.backoff.NumRequeues(req)
}
