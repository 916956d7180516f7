package conversion

import (
	"net/http"
	"net/http/httptest"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHandlerStreamsOverHTTP: served by net/http over HTTP/1.1, as the
// webhook server serves it, behind the instrumentation controller-runtime
// puts around every webhook (promhttp's, whose writer must hand
// http.ResponseController the server's own), the handler answers a review
// in the API server's order while it still reads it, in a few MB; the Go
// client, as the API server's, reads the whole answer meanwhile. A review
// with its objects first is held whole and answered all the same.
func TestHandlerStreamsOverHTTP(t *testing.T) {
	scheme := newTestScheme(t)
	instrumented := promhttp.InstrumentHandlerDuration(
		prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "latency"}, []string{"code"}),
		promhttp.InstrumentHandlerCounter(
			prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests"}, []string{"code"}),
			promhttp.InstrumentHandlerInFlight(prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_flight"}),
				newConversionHandler(t, scheme))))
	server := httptest.NewServer(instrumented)
	defer server.Close()

	const objects = 4000
	tasks := benchmarkInputs(t)[2] // 10 KB Tasks to v1alpha1
	for _, tc := range []struct {
		order    reviewOrder
		streamed bool
	}{{apiServerOrder, true}, {objectsFirstOrder, false}} {
		t.Run("order="+tc.order.name, func(t *testing.T) {
			review := newGeneratedReview(t, scheme, tasks, objects, tc.order)
			var answer struct {
				Response struct {
					UID              string        `json:"uid"`
					ConvertedObjects skippedValues `json:"convertedObjects"`
					Result           metav1.Status `json:"result"`
				} `json:"response"`
			}
			peak := peakHeap(func() {
				request, err := http.NewRequest(http.MethodPost, server.URL+Path, review.reader())
				if err != nil {
					t.Fatal(err)
				}
				request.ContentLength = review.size()
				response, err := server.Client().Do(request)
				if err != nil {
					t.Fatalf("POST: %v", err)
				}
				defer response.Body.Close()
				if response.StatusCode != http.StatusOK || response.ProtoMajor != 1 {
					t.Fatalf("%s %s", response.Proto, response.Status)
				}
				if err := jsonv2.UnmarshalDecode(jsontext.NewDecoder(response.Body), &answer); err != nil {
					t.Fatalf("reading the answer: %v", err)
				}
			})
			got := answer.Response
			if got.Result.Status != metav1.StatusSuccess || int(got.ConvertedObjects) != objects || got.UID != "0f6a3d52" {
				t.Errorf("uid %q, %d objects, result %+v; want 0f6a3d52, %d, Success", got.UID, got.ConvertedObjects, got.Result, objects)
			}
			t.Logf("a review of %d bytes over HTTP: peak heap %.1f MiB", review.size(), float64(peak)/(1<<20))
			if streamed := peak < uint64(review.size()/3); streamed != tc.streamed {
				t.Errorf("a review of %d bytes took %.1f MiB of heap; want it streamed: %v", review.size(), float64(peak)/(1<<20), tc.streamed)
			}
		})
	}
}
