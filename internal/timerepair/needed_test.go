package timerepair_test

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storedversions"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/timerepair"
)

// TestStartReadsNoRunWhereNoneCanNeedIt starts the repair against a real API
// server whose TaskRun CRD has storedVersions [v1], as after release 6's
// migration, with a run holding release 2's times put straight into etcd
// (which no API server could store under [v1]: the test shows that the
// repair does not look): it sends no request for TaskRuns at all, and the
// API server makes no conversion review. With [v1beta1 v1], as while that
// migration is under way, the same start lists the runs through v1beta1 and
// repairs the run.
func TestStartReadsNoRunWhereNoneCanNeedIt(t *testing.T) {
	if env == nil {
		t.Skip("-short: needs a kube-apiserver and etcd")
	}
	ns := env.Namespace(t)
	env.PutInEtcd(t, "taskruns", ns, "malformed", []byte(storedByRelease2))
	start := func(t *testing.T) (taskRunRequests []string, reviews float64) {
		t.Helper()
		var requests atomic.Pointer[[]string]
		requests.Store(&[]string{})
		httpClient, err := rest.HTTPClientFor(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		next := httpClient.Transport
		httpClient.Transport = roundTripper(func(req *http.Request) (*http.Response, error) {
			if strings.Contains(req.URL.Path, "/taskruns") {
				seen := append(slices.Clone(*requests.Load()), req.Method+" "+req.URL.Path)
				requests.Store(&seen)
			}
			return next.RoundTrip(req)
		})
		before := settledConversionReviews(t)
		repairer := &timerepair.Repairer{Config: env.Config, HTTPClient: httpClient, Writer: env.Client, Reader: env.Client}
		if err := repairer.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		return *requests.Load(), conversionReviews(t) - before
	}

	setStoredVersions(t, []string{"v1"})
	if requests, reviews := start(t); len(requests) > 0 || reviews > 0 {
		t.Errorf("with storedVersions [v1], the repair sent %q and caused %v conversion reviews; want none", requests, reviews)
	}
	if err := env.Client.List(t.Context(), &v1beta1.TaskRunList{}, client.InNamespace(ns)); err == nil {
		t.Fatal("the run put in etcd reads typed; the test proves nothing")
	}

	setStoredVersions(t, []string{"v1beta1", "v1"})
	requests, _ := start(t)
	if !slices.Contains(requests, "GET /apis/minitask.dev/v1beta1/taskruns") {
		t.Errorf("with storedVersions [v1beta1 v1], the repair sent %q; want a LIST through v1beta1", requests)
	}
	if err := env.Client.List(t.Context(), &v1beta1.TaskRunList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("typed LIST after the repair: %v", err)
	}
}

// roundTripper is a function that is an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// conversionReviews is how many reviews the test's webhook server has answered.
func conversionReviews(t testing.TB) float64 {
	return testenv.CounterValue(t, "controller_runtime_webhook_requests_total", map[string]string{"webhook": "/convert"})
}

// settledConversionReviews waits until the API server's watch caches have
// converted what was written before (no review for half a second), and
// returns how many reviews were answered.
func settledConversionReviews(t testing.TB) float64 {
	last := conversionReviews(t)
	for {
		time.Sleep(500 * time.Millisecond)
		now := conversionReviews(t)
		if now == last {
			return now
		}
		last = now
	}
}

// setStoredVersions sets the TaskRun CRD's status.storedVersions, as an
// upgrade, a rollback or a migration does, and sets it back to what it was
// when the test ends.
func setStoredVersions(t testing.TB, stored []string) {
	t.Helper()
	setStoredVersionsOn(t, env, stored)
}

// setStoredVersionsOn is setStoredVersions on the API server of e.
func setStoredVersionsOn(t testing.TB, env *testenv.Env, stored []string) {
	t.Helper()
	was := env.SetStoredVersions(t, storedversions.TaskRuns, stored)
	t.Cleanup(func() { env.SetStoredVersions(t, storedversions.TaskRuns, was) })
}
