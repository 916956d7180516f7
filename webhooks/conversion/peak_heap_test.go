package conversion

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// peakHeapGCPercent is the GOGC under which peakHeap measures: the heap
// then grows a tenth past what is live before it is collected, so the most
// it holds reads what was live at the time to within a tenth, rather than
// the collector's pacing (at GOGC=100, twice what was live before the
// last collection).
const peakHeapGCPercent = 10

// peakHeap runs f and returns the most heap its objects took at once, over
// what was live before it: the runtime's heap objects, live and not yet
// swept, sampled every 100 µs.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(peakHeapGCPercent))
	runtime.GC()
	base := heapObjectBytes()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		high := base
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max(high, heapObjectBytes())
				return
			case <-tick.C:
				high = max(high, heapObjectBytes())
			}
		}
	}()
	f()
	close(stop)
	return <-peak - base
}

// heapObjectBytes is the memory the heap's objects, live and not yet swept,
// take now.
func heapObjectBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// BenchmarkConversionPeakHeap measures the most heap the handler takes at
// once for one review of 10,000 Tasks of about 10 KB (100 MB), both ways,
// in the order the API server writes a review and with its objects first.
// The review is written as the handler reads it and the answer dropped as
// it is written (generatedReview), so that neither counts. It reports
// peak-heap-MB, the most of all iterations; run it with -benchtime=1x.
func BenchmarkConversionPeakHeap(b *testing.B) {
	scheme := newTestScheme(b)
	h := newConversionHandler(b, scheme)
	const objects = 10000
	for _, input := range benchmarkInputs(b) {
		if input.Kind != "Task" {
			continue
		}
		for _, order := range reviewOrders {
			review := newGeneratedReview(b, scheme, input, objects, order)
			b.Run(input.Name(objects)+"/order="+order.name, func(b *testing.B) {
				var most uint64
				for b.Loop() {
					most = max(most, peakHeap(func() { serveGenerated(b, h, review) }))
				}
				b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
				b.ReportMetric(float64(review.size())/1e6, "review-MB")
			})
		}
	}
}
