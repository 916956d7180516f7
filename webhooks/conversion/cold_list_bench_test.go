package conversion

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkColdList measures the first LIST of 10,000 ~10 KB Tasks after a
// kube-apiserver restart (etcd keeps them), in v1alpha1 and in v1beta1, the
// stored version: what a client such as a controller starting with the API
// server sees.
//
// What the figure is, in Kubernetes 1.37: the API server builds a CRD's
// storage, with one watch cache per served version, at the first request for
// any of its resources, and each cache fills itself by LISTing etcd and
// decoding every object into its own version. The v1alpha1 cache has every
// object converted by the webhook, one review per object; the v1beta1 cache
// converts nothing. A LIST with no resourceVersion is a consistent read
// served from the cache once that cache is initialized; until then the API
// server answers it (no limit, no selector) 429 with Retry-After of at least
// 1 s, which client-go waits out and retries. So each cold LIST is: both
// caches filling at once on the same CPUs, the LIST's own cache catching up,
// and the LIST served from it, with the 1 s granularity of the retries.
//
// Each measured LIST is the first request for Tasks after its own restart.
// The pair runs twice, v1alpha1 first and then v1beta1 first; each version's
// slower cold LIST counts. It also counts the conversion requests our
// webhook served during each cold LIST. It ignores b.N: run it with
// -benchtime=1x. With -short it is skipped.
func BenchmarkColdList(b *testing.B) {
	const objects = 10000
	env := testenv.ForTest(b, SetupWebhooks)
	ns := env.Namespace(b)
	createTasks(b, env, ns, objects)

	attempts := &attemptCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the server is measured
	cfg.Timeout = 10 * time.Minute
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { attempts.next = rt; return attempts }
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}

	took := map[string][]time.Duration{}
	conversions := map[string][]float64{}
	tooMany := map[string]int{}
	var size int
	for _, order := range [][]string{{"v1alpha1", "v1beta1"}, {"v1beta1", "v1alpha1"}} {
		for _, version := range order {
			env.RestartAPIServer(b)
			waitForTasksServed(b, clientset)
			attempts.reset()
			callsBefore := conversionRequests(b)
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
			body, err := clientset.Discovery().RESTClient().Get().
				AbsPath("/apis/minitask.dev", version, "namespaces", ns, "tasks").
				MaxRetries(1000). // every 429 while the cache fills; ctx bounds the wait
				DoRaw(ctx)
			cancel()
			d := time.Since(start)
			if err != nil {
				b.Fatalf("cold LIST %s Tasks: %v", version, err)
			}
			calls := conversionRequests(b) - callsBefore
			n, last := attempts.read()
			took[version] = append(took[version], d)
			conversions[version] = append(conversions[version], calls)
			tooMany[version] = max(tooMany[version], n-1)
			size = max(size, len(body))
			b.Logf("cold LIST %s (order %v): %v, %.1f MB, %d requests (the last %v), %.0f conversion requests",
				version, order, d, float64(len(body))/1e6, n, last, calls)
		}
	}
	alpha, beta := slices.Max(took["v1alpha1"]), slices.Max(took["v1beta1"])
	b.ReportMetric(float64(alpha)/float64(time.Millisecond), "cold-v1alpha1-ms")
	b.ReportMetric(float64(beta)/float64(time.Millisecond), "cold-v1beta1-ms")
	b.ReportMetric(float64(alpha)/float64(beta), "cold-ratio")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(mean(conversions["v1alpha1"]), "conversions/cold-v1alpha1-list")
	b.ReportMetric(mean(conversions["v1beta1"]), "conversions/cold-v1beta1-list")
	b.ReportMetric(float64(tooMany["v1alpha1"]), "cold-v1alpha1-429s")
	b.ReportMetric(float64(tooMany["v1beta1"]), "cold-v1beta1-429s")
	b.ReportMetric(0, "ns/op")
	b.Logf("cold LIST of %d Tasks (%.1f MB): v1alpha1 %v, v1beta1 %v (slower of two each)", objects, float64(size)/1e6, alpha, beta)
}

// waitForTasksServed waits until discovery lists Tasks in both versions:
// the restarted API server has read the CRD from etcd. Discovery does not
// touch the Tasks' storage, so their watch caches stay cold.
func waitForTasksServed(b *testing.B, clientset kubernetes.Interface) {
	b.Helper()
	testenv.Eventually(b, func() (bool, string) {
		for _, version := range []string{"v1alpha1", "v1beta1"} {
			resources, err := clientset.Discovery().ServerResourcesForGroupVersion("minitask.dev/" + version)
			if err != nil {
				return false, err.Error()
			}
			if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "tasks" }) {
				return false, "no tasks in minitask.dev/" + version
			}
		}
		return true, ""
	}, "Tasks served after the restart")
}

// attemptCounter counts the HTTP requests that go through it, and when the
// last one started: client-go retries a 429 by itself, so one LIST call may
// be several requests.
type attemptCounter struct {
	next http.RoundTripper

	mu        sync.Mutex
	n         int
	lastStart time.Time
}

func (a *attemptCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.n++
	a.lastStart = time.Now()
	a.mu.Unlock()
	return a.next.RoundTrip(req)
}

func (a *attemptCounter) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n = 0
}

// read returns how many requests went through since reset, and how long ago
// the last one started.
func (a *attemptCounter) read() (int, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, time.Since(a.lastStart)
}

func mean(vs []float64) float64 {
	total := 0.0
	for _, v := range vs {
		total += v
	}
	return total / float64(len(vs))
}
