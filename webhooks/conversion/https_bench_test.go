package conversion

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkConversionHTTPS sends ConversionReviews to the webhook server as
// the API server does: over TLS on loopback, to the server and handler the
// manager runs. One client sends them one after another, a fixed number per
// size (httpsRequests), after two that are not counted; it reports the
// latency percentiles of those. It ignores b.N: run it with -benchtime=1x.
// With -short it is skipped (it starts a kube-apiserver and etcd).
func BenchmarkConversionHTTPS(b *testing.B) {
	env := testenv.ForTest(b, SetupWebhooks)
	baseURL, client, err := env.WebhookClient()
	if err != nil {
		b.Fatal(err)
	}
	scheme := newTestScheme(b)
	for _, input := range benchmarkInputs(b) {
		for _, n := range reviewSizes() {
			body := review(b, scheme, input.To, input.Objects(n)...)
			b.Run(input.Name(n), func(b *testing.B) {
				for range 2 {
					postOverTLS(b, client, baseURL, body)
				}
				latencies := make([]time.Duration, httpsRequests(n))
				for i := range latencies {
					start := time.Now()
					postOverTLS(b, client, baseURL, body)
					latencies[i] = time.Since(start)
				}
				reportLatencies(b, latencies)
			})
		}
	}
}

// httpsRequests bounds each size's load: a 10,000 × 10 KB review takes
// seconds, so its p99 is the worst of a few; a single object's is a real p99.
// The whole benchmark takes about two minutes on two cores.
func httpsRequests(objects int) int {
	switch {
	case objects <= 1:
		return 1000
	case objects <= 100:
		return 200
	case objects <= 1500:
		return 20
	default:
		return 5
	}
}

// postOverTLS posts one review body to the webhook server at baseURL and
// fails unless it answers Success. It reads the answer as it comes, keeping
// only its start (for the failure message) and its last bytes: the load
// generator runs in the webhook's process, on the same two cores, and
// holding a 100 MB answer whole, as the API server (another process, which
// decodes as it reads) never does here, would charge the webhook's
// latency with the generator's allocations and collections.
func postOverTLS(b *testing.B, client *http.Client, baseURL string, body []byte) {
	resp, err := client.Post(baseURL+"/convert", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatalf("posting a review: %v", err)
	}
	defer resp.Body.Close()
	success := []byte(`"status":"Success"`)
	var head, window []byte
	buf := make([]byte, 64<<10)
	found := false
	for {
		n, err := resp.Body.Read(buf)
		if len(head) < 300 {
			head = append(head, buf[:min(n, 300-len(head))]...)
		}
		window = append(window, buf[:n]...)
		found = found || bytes.Contains(window, success)
		window = append(window[:0], window[max(0, len(window)-len(success)+1):]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatalf("reading the answer: %v", err)
		}
	}
	if resp.StatusCode != http.StatusOK || !found {
		b.Fatalf("review answered HTTP %d: %.300s", resp.StatusCode, head)
	}
}

// reportLatencies reports the p50, p99 and max of latencies (nearest rank),
// in milliseconds, and how many there were.
func reportLatencies(b *testing.B, latencies []time.Duration) {
	slices.Sort(latencies)
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(latencies))+0.999999) - 1
		return latencies[max(0, min(i, len(latencies)-1))]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(rank(0.50)), "p50-ms")
	b.ReportMetric(ms(rank(0.99)), "p99-ms")
	b.ReportMetric(ms(latencies[len(latencies)-1]), "max-ms")
	b.ReportMetric(float64(len(latencies)), "requests")
	b.ReportMetric(0, "ns/op") // one op is the whole fixed load: meaningless
	b.Logf("%d requests: p50 %v, p99 %v, max %v", len(latencies), rank(0.5), rank(0.99), latencies[len(latencies)-1])
}
