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

// BenchmarkWriteLatency measures what the conversion review that every
// v1beta1 write costs (docs/conversion.md, "Conversion reviews on v1beta1
// writes") adds to the write: 200 v1beta1 TaskRun creates, one after
// another, timed by the client, with the reviews answered at once
// (delay=0ms), with every review held 50 ms in front of the handler
// (delay=50ms), and on an API server without watch cache (watch-cache=off),
// which sends no review. It reports each case's p50, p99 and max (nearest
// rank) and the reviews per create, and starts two API servers, one per
// watch-cache setting. The review is the watch cache's, made after the
// write has returned, so held reviews should not show in the creates'
// latency: the benchmark is there to show that they do not.
//
// It ignores b.N: run it with -benchtime=1x. With -short it is skipped.
func BenchmarkWriteLatency(b *testing.B) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(b, rec.setup)
	cached := &reviewWriter{env: env, rec: rec, ns: env.Namespace(b), hooks: true}
	for _, delay := range []time.Duration{0, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("watch-cache=on/delay=%dms", delay.Milliseconds()), func(b *testing.B) {
			rec.setDelay(delay)
			defer rec.setDelay(0)
			reportCreateLatencies(b, cached, 1)
		})
	}
	b.Run("watch-cache=off/delay=0ms", func(b *testing.B) {
		rec := &reviewRecorder{}
		env := testenv.ForTest(b, rec.setup, func(e *envtest.Environment) {
			e.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
		})
		reportCreateLatencies(b, &reviewWriter{env: env, rec: rec, ns: env.Namespace(b), hooks: true}, 0)
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
			b.Fatalf("creating %s: %v", run.Name, err)
		}
		took = append(took, time.Since(start))
	}
	return took
}
