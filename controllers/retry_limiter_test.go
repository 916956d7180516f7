package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestRetryLimiter plays a run's failing reconciles against the limiter: the
// delay doubles from retryBaseDelay to retryMaxDelay, a deadline given by
// retryBy bounds the one retry that follows, and Forget starts over.
func TestRetryLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	run := types.NamespacedName{Namespace: "ns", Name: "run"}
	// step is one failed reconcile: retryBy(deadline) first if deadline is
	// set, forget instead of a failure if forget is set.
	type step struct {
		deadline time.Duration
		forget   bool
	}
	tests := map[string]struct {
		steps []step
		want  []time.Duration
	}{
		"doubles from the base": {
			steps: []step{{}, {}, {}, {}},
			want:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond},
		},
		"capped at a minute": {
			steps: make([]step, 12),
			want: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
				1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
				25600 * time.Millisecond, 51200 * time.Millisecond, time.Minute, time.Minute},
		},
		"a nearer deadline bounds one retry, and the backoff goes on": {
			steps: []step{{}, {deadline: 50 * time.Millisecond}, {}},
			want:  []time.Duration{100 * time.Millisecond, 50 * time.Millisecond, 400 * time.Millisecond},
		},
		"a farther deadline changes nothing": {
			steps: []step{{deadline: time.Hour}, {deadline: time.Hour}},
			want:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
		},
		"a deadline passed: retried at once, to time the run out": {
			steps: []step{{deadline: -time.Second}},
			want:  []time.Duration{0},
		},
		"forget starts over, and drops the deadline": {
			steps: []step{{}, {}, {deadline: time.Millisecond, forget: true}, {}},
			want:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 0, 100 * time.Millisecond},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newRetryLimiter(func() time.Time { return now })
			req := reconcile.Request{NamespacedName: run}
			var got []time.Duration
			for _, s := range tc.steps {
				if s.deadline != 0 {
					l.retryBy(run, now.Add(s.deadline))
				}
				if s.forget {
					l.Forget(req)
					got = append(got, 0)
					continue
				}
				got = append(got, l.When(req))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
			if other := l.When(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}); other != retryBaseDelay {
				t.Errorf("another run's first delay = %v, want %v: backoff is per run", other, retryBaseDelay)
			}
		})
	}
}
