package conversion_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// BenchmarkWriteLatency measures what the conversion reviews of the watch
// caches, which every change of a TaskRun costs (docs/conversion.md,
// "Conversion reviews on v1beta1 writes"), add to the write: 200 TaskRun
// creates through v1, the storage version, one after another, timed by the
// client, with the reviews answered at once (delay=0ms), with every review
// held 50 ms in front of the handler (delay=50ms), and on an API server
// without watch cache (watch-cache=off), which sends none. It reports each
// case's p50, p99 and max (nearest rank) and the reviews per create, and
// starts two API servers, one per watch-cache setting. The validating
// webhooks are deleted first: those whose rules name v1beta1 alone have the
// API server convert a v1 create to judge their match conditions, a review
// in the write's path, which would hide what the benchmark shows. The
// caches' reviews are made after the write has returned, so held reviews
// should not show in the creates' latency: the benchmark is there to show
// that they do not. (A v1beta1 write, since release 6 stores v1, waits for
// reviews of its own: to v1 to be stored, and back for the answer.)
//
// It ignores b.N: run it with -benchtime=1x. With -short it is skipped.
func BenchmarkWriteLatency(b *testing.B) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(b, rec.setup)
	cached := &reviewWriter{env: env, rec: rec, ns: env.Namespace(b), version: "v1", hooks: true}
	cached.dropValidatingWebhooks(b)
	for _, delay := range []time.Duration{0, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("watch-cache=on/delay=%dms", delay.Milliseconds()), func(b *testing.B) {
			rec.setDelay(delay)
			defer rec.setDelay(0)
			reportCreateLatencies(b, cached, len(watchCaches))
		})
	}
	b.Run("watch-cache=off/delay=0ms", func(b *testing.B) {
		rec := &reviewRecorder{}
		env := testenv.ForTest(b, rec.setup, func(e *envtest.Environment) {
			e.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
		})
		w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(b), version: "v1", hooks: true}
		w.dropValidatingWebhooks(b)
		reportCreateLatencies(b, w, 0)
	})
}

// reportCreateLatencies creates 200 TaskRuns one after another, after a few
// unmeasured ones that open the client's connection, and reports the
// creates' latencies and the reviews they caused. Each create should cost
// reviews reviews, which it waits for, so that none falls into the next
// case.
func reportCreateLatencies(b *testing.B, w *reviewWriter, reviews int) {
	const warmUp, creates = 5, 200
	w.createLatencies(b, warmUp)
	w.rec.wait(warmUp * reviews)
	took := w.createLatencies(b, creates)
	got := len(w.rec.wait(creates * reviews))
	b.ReportMetric(float64(got)/creates, "reviews/create")
	conversion.ReportLatencies(b, took)
}

// createLatencies creates n TaskRuns one after another and returns how
// long each create took, as the client saw it.
func (w *reviewWriter) createLatencies(b testing.TB, n int) []time.Duration {
	b.Helper()
	took := make([]time.Duration, 0, n)
	for range n {
		run := w.newRun()
		start := time.Now()
		if err := w.env.Client.Create(context.Background(), run); err != nil {
			b.Fatalf("creating %s: %v", run.GetName(), err)
		}
		took = append(took, time.Since(start))
	}
	return took
}
