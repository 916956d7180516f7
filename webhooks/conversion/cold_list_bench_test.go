package conversion

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkColdList measures the first LIST of 10,000 ~10 KB Tasks after a
// kube-apiserver restart (etcd keeps them), in v1alpha1, in v1beta1 and in
// v1, the stored version since release 6: what a client such as a
// controller starting with the API server waits for. Its ratio is
// v1alpha1's time over v1's, conversion against none; v1beta1, converted
// too since release 6 (until then it was stored, and the reference), is
// reported beside them.
//
// What the figure is, in Kubernetes 1.37: the API server builds a CRD's
// storage, with one watch cache per served version, at the first request for
// any of its resources, and each cache fills itself by LISTing etcd and
// decoding every object into its own version. The v1alpha1 and v1beta1
// caches have every object converted by the webhook, one review per object;
// the v1 cache converts nothing. A LIST with no resourceVersion is a
// consistent read served from the cache once that cache is initialized;
// until then the API server answers it 429 (a LIST with a limit and no
// selector would go to etcd instead, paged, with no watch cache). So each
// cold LIST is every cache filling at once on the same CPUs, then the LIST
// served from its own. The benchmark asks again 100 ms after each 429 rather than after the
// Retry-After, which client-go would wait out: that grows with the wait
// (1 s, then up to 30 s past a minute) and would measure client-go's
// back-off more than the API server.
//
// Each measured LIST is the first request for Tasks after its own restart.
// The three run twice, v1alpha1 first and then v1 first; each version's
// slower cold LIST counts. It also counts the conversion requests our
// webhook served during each cold LIST. It ignores b.N: run it with
// -benchtime=1x. With -short it is skipped.
func BenchmarkColdList(b *testing.B) {
	const objects = 10000
	env := testenv.ForTest(b, SetupWebhooks)
	ns := env.Namespace(b)
	createTasks(b, env, ns, objects)

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the server is measured
	cfg.Timeout = 10 * time.Minute
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}

	took, waited := map[string][]time.Duration{}, map[string][]time.Duration{}
	conversions := map[string][]float64{}
	var size int
	for _, order := range [][]string{{"v1alpha1", "v1beta1", "v1"}, {"v1", "v1beta1", "v1alpha1"}} {
		for _, version := range order {
			env.RestartAPIServer(b)
			waitForTasksServed(b, clientset)
			callsBefore := conversionRequests(b)
			l := coldList(b, clientset, "/apis/minitask.dev/"+version+"/namespaces/"+ns+"/tasks", cfg.Timeout)
			calls := conversionRequests(b) - callsBefore
			took[version] = append(took[version], l.took)
			waited[version] = append(waited[version], l.waited)
			conversions[version] = append(conversions[version], calls)
			size = max(size, l.size)
			b.Logf("cold LIST %s (order %v): %v, of which %v answered 429 (%d times, the last Retry-After %d s), %.1f MB, %.0f conversion requests",
				version, order, l.took, l.waited, l.tooMany, l.retryAfter, float64(l.size)/1e6, calls)
		}
	}
	alpha, beta, stored := slices.Max(took["v1alpha1"]), slices.Max(took["v1beta1"]), slices.Max(took["v1"])
	for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
		b.ReportMetric(float64(slices.Max(took[version]))/float64(time.Millisecond), "cold-"+version+"-ms")
		b.ReportMetric(float64(slices.Max(waited[version]))/float64(time.Millisecond), "cold-"+version+"-429-ms")
		b.ReportMetric(mean(conversions[version]), "conversions/cold-"+version+"-list")
	}
	b.ReportMetric(float64(alpha)/float64(stored), "cold-ratio")
	// The goal is per converted cache that fills: a cold LIST of any
	// version makes the API server fill every version's cache at once, the
	// converted ones (v1alpha1 and v1beta1, both through the webhook) side
	// by side, so that a LIST of v1alpha1 waits for two conversions of
	// every object, not one.
	b.ReportMetric(float64(alpha)/float64(stored)/convertedCaches, "cold-ratio-per-cache")
	b.ReportMetric(float64(beta)/float64(stored), "cold-v1beta1-ratio")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(0, "ns/op")
	b.Logf("cold LIST of %d Tasks (%.1f MB): v1alpha1 %v, v1beta1 %v, v1 %v (slower of two each)", objects, float64(size)/1e6, alpha, beta, stored)
}

// convertedCaches is how many watch caches a cold LIST fills through the
// webhook: one per served version but the stored one (v1alpha1, v1beta1).
const convertedCaches = 2

// coldListResult is one cold LIST: how long from the first request to the
// last byte, how much of it the API server answered 429 (its cache not
// ready yet), how often, the last Retry-After it asked for, and the size.
type coldListResult struct {
	took, waited time.Duration
	tooMany      int
	retryAfter   int
	size         int
}

// coldList LISTs path, raw bytes, asking again 100 ms after each 429, until
// the API server serves it.
func coldList(b *testing.B, clientset kubernetes.Interface, path string, timeout time.Duration) coldListResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var l coldListResult
	start := time.Now()
	for {
		attempt := time.Now()
		body, err := clientset.Discovery().RESTClient().Get().AbsPath(path).MaxRetries(0).DoRaw(ctx)
		if apierrors.IsTooManyRequests(err) {
			l.tooMany++
			l.retryAfter, _ = apierrors.SuggestsClientDelay(err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			b.Fatalf("cold LIST %s: %v", path, err)
		}
		l.took, l.waited, l.size = time.Since(start), attempt.Sub(start), len(body)
		return l
	}
}

// waitForTasksServed waits until discovery lists Tasks in every version:
// the restarted API server has read the CRD from etcd. Discovery does not
// touch the Tasks' storage, so their watch caches stay cold.
func waitForTasksServed(b *testing.B, clientset kubernetes.Interface) {
	b.Helper()
	testenv.Eventually(b, func() (bool, string) {
		for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
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

func mean(vs []float64) float64 {
	total := 0.0
	for _, v := range vs {
		total += v
	}
	return total / float64(len(vs))
}
