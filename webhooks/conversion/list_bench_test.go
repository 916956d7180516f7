package conversion

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkListThroughConversion LISTs 1,500 ~10 KB Tasks from the API
// server in v1alpha1, which it converts through our webhook, and in v1,
// which it stores since release 6, so no conversion; its ratio is the first
// over the second. v1beta1, the stored version until then and converted
// since, is listed too. It reads the raw response bytes, so the versions
// differ only in what the server does; the LISTs alternate, and each
// version's median counts. It also counts the conversion requests our
// webhook served while the Tasks were created and while they were listed:
// the API server converts an object when it is written and keeps the result,
// so a LIST in v1alpha1 may call the webhook for nothing at all. It ignores
// b.N: run it with -benchtime=1x. With -short it is skipped.
func BenchmarkListThroughConversion(b *testing.B) {
	const objects, lists = 1500, 7
	env := testenv.ForTest(b, SetupWebhooks)
	ns := env.Namespace(b)
	callsBefore := conversionRequests(b)
	createTasks(b, env, ns, objects)
	settled := conversionRequests(b)
	b.ReportMetric((settled-callsBefore)/objects, "conversions/create")

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: the server is measured
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	list := func(version string) (time.Duration, int) {
		start := time.Now()
		body, err := clientset.Discovery().RESTClient().Get().
			AbsPath("/apis/minitask.dev", version, "namespaces", ns, "tasks").DoRaw(context.Background())
		if err != nil {
			b.Fatalf("LIST %s Tasks: %v", version, err)
		}
		return time.Since(start), len(body)
	}
	list("v1alpha1") // warm the connection and the webhook's first request
	took := map[string][]time.Duration{}
	var size int
	for range lists {
		for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
			d, n := list(version)
			took[version] = append(took[version], d)
			size = max(size, n)
		}
	}
	b.ReportMetric((conversionRequests(b)-settled)/(lists+1), "conversions/list")
	alpha, beta, stored := medianDuration(took["v1alpha1"]), medianDuration(took["v1beta1"]), medianDuration(took["v1"])
	b.ReportMetric(float64(alpha)/float64(time.Millisecond), "v1alpha1-ms")
	b.ReportMetric(float64(beta)/float64(time.Millisecond), "v1beta1-ms")
	b.ReportMetric(float64(stored)/float64(time.Millisecond), "v1-ms")
	b.ReportMetric(float64(alpha)/float64(stored), "ratio")
	b.ReportMetric(float64(beta)/float64(stored), "v1beta1-ratio")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(0, "ns/op")
	b.Logf("LIST of %d Tasks (%.1f MB): v1alpha1 %v, v1beta1 %v, v1 %v (medians of %d)", objects, float64(size)/1e6, alpha, beta, stored, lists)
}

// createTasks creates n ~10 KB Tasks in ns, eight at a time.
func createTasks(b testing.TB, env *testenv.Env, ns string, n int) {
	b.Helper()
	testenv.CreateInParallel(b, env.Client, 8, n, func(i int) client.Object {
		task := largeTask(i)
		// Only what a client sets: no UID, owner or finalizer.
		task.ObjectMeta = metav1.ObjectMeta{Name: task.Name, Namespace: ns, Labels: task.Labels, Annotations: task.Annotations}
		return task
	})
}

// conversionRequests is how many requests the conversion webhook has served
// so far: the Env serves it in this process, so controller-runtime's
// metrics registry here counts them.
func conversionRequests(tb testing.TB) float64 {
	tb.Helper()
	return testenv.CounterValue(tb, "controller_runtime_webhook_requests_total", map[string]string{"webhook": Path})
}

func medianDuration(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
