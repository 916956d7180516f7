package conversion

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
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
	// 10,000; with -short, the largest size it runs.
	sizes := reviewSizes()
	objects := sizes[len(sizes)-1]
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

// TestReviewAtTheBoundFitsTheDeployment: a review of MaxReviewBytes, in
// either order, with its GC's tenth (peakHeap), and the manager's own heap
// fit in the GOMEMLIMIT the Deployment gives the manager, which
// config/manager/manager.yaml must still say.
func TestReviewAtTheBoundFitsTheDeployment(t *testing.T) {
	if limit := deployedGOMEMLIMIT(t); limit != deployedMemoryLimit {
		t.Fatalf("config/manager gives the manager GOMEMLIMIT=%d bytes; MaxReviewBytes was set for %d", limit, deployedMemoryLimit)
	}
	scheme := newTestScheme(t)
	h := newConversionHandler(t, scheme)
	tasks := benchmarkInputs(t)[2] // 10 KB Tasks to v1alpha1: the largest answer
	for _, order := range reviewOrders {
		t.Run("order="+order.name, func(t *testing.T) {
			review := newGeneratedReview(t, scheme, tasks, 0, order).withSize(t, MaxReviewBytes)
			peak := peakHeap(func() { serveGenerated(t, h, review) })
			t.Logf("%d objects, %d bytes: peak heap %.1f MiB", review.n, review.size(), float64(peak)/(1<<20))
			if room := uint64(deployedMemoryLimit - managerHeap); peak > room {
				t.Errorf("a review of %d bytes took %.1f MiB of heap, more than the %.0f MiB GOMEMLIMIT leaves beside the manager's %d MiB",
					review.size(), float64(peak)/(1<<20), float64(room)/(1<<20), managerHeap>>20)
			}
		})
	}
}

// deployedGOMEMLIMIT reads the GOMEMLIMIT config/manager/manager.yaml gives
// the manager's container, in bytes.
func deployedGOMEMLIMIT(t *testing.T) int64 {
	var deployment appsv1.Deployment
	manifests.Read(t, "config/manager/manager.yaml").One(t, "Deployment", &deployment)
	for _, container := range deployment.Spec.Template.Spec.Containers {
		for _, env := range container.Env {
			if container.Name == "manager" && env.Name == "GOMEMLIMIT" {
				return parseGOMEMLIMIT(t, env.Value)
			}
		}
	}
	t.Fatal("config/manager gives the manager no GOMEMLIMIT")
	return 0
}

// parseGOMEMLIMIT reads a GOMEMLIMIT as the Go runtime does: bytes, with
// an optional B, KiB, MiB, GiB or TiB.
func parseGOMEMLIMIT(t *testing.T, value string) int64 {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift, number := uint(0), value
	for _, unit := range units {
		if n, ok := strings.CutSuffix(value, unit.suffix); ok {
			shift, number = unit.shift, n
			break
		}
	}
	n, err := strconv.ParseInt(number, 10, 64)
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", value, err)
	}
	return n << shift
}
