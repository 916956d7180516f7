package conversion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/stashguard"
)

// Every v1beta1 write of a TaskRun costs one conversion review per other
// served version, v1beta1 to v1alpha1 and (since release 5) to v1, though
// v1beta1 is the storage version and no client asked for either. These tests pin where it comes from (docs/conversion.md,
// "Conversion reviews on v1beta1 writes"): the API server keeps one storage,
// and so one watch cache, per served version; the v1alpha1 one decodes every
// change it sees in etcd into v1alpha1, whoever wrote it and whether or not
// anyone watches v1alpha1. Admission, field management and the status
// subresource convert nothing on a v1beta1 write.

// oneToEachOtherVersion is what one change of one TaskRun costs: the v1 and the
// v1alpha1 watch caches' decodes of it.
var oneToEachOtherVersion = []string{"v1beta1->v1", "v1beta1->v1alpha1"}

func TestConversionReviewsOnV1beta1Writes(t *testing.T) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(t, rec.setup)
	w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(t), hooks: true}

	t.Run("all webhooks", func(t *testing.T) { w.checkEveryWrite(t, oneToEachOtherVersion) })
	t.Run("a write straight into etcd", func(t *testing.T) {
		// No API request at all: nothing but the watch cache sees this change.
		w.rec.take()
		env.PutInEtcd(t, "taskruns", w.ns, "from-etcd", []byte(`{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun","spec":{"taskRef":{"name":"t"}}}`))
		if diff := cmp.Diff(oneToEachOtherVersion, w.rec.wait(len(oneToEachOtherVersion))); diff != "" {
			t.Errorf("reviews (-want +got):\n%s", diff)
		}
	})
	t.Run("a v1alpha1 watch open", func(t *testing.T) {
		// Its watchers share the cache's v1alpha1 objects: no review more.
		stop := w.watchV1alpha1(t, 3)
		defer stop()
		w.checkEveryWrite(t, oneToEachOtherVersion)
	})
	t.Run("no validating webhooks", func(t *testing.T) {
		w.dropValidatingWebhooks(t)
		w.checkEveryWrite(t, oneToEachOtherVersion)
	})
}

// TestConversionReviewsWithoutWatchCache proves the attribution: with the
// API server's watch cache off (--watch-cache=false, a cluster-wide flag; the
// API server has no per-resource one for custom resources) a v1beta1 write
// costs no review, and it is a v1alpha1 watcher that pays, one review per
// change and per watcher, since each watch then decodes from etcd on its own.
func TestConversionReviewsWithoutWatchCache(t *testing.T) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(t, rec.setup, func(e *envtest.Environment) {
		e.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
	})
	w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(t), hooks: true}

	t.Run("no watcher", func(t *testing.T) { w.checkEveryWrite(t, nil) })
	t.Run("two v1alpha1 watches open", func(t *testing.T) {
		stop := w.watchV1alpha1(t, 2)
		defer stop()
		w.checkEveryWrite(t, []string{"v1beta1->v1alpha1", "v1beta1->v1alpha1"})
	})
}

// reviewWriter makes the v1beta1 writes whose reviews a test counts.
type reviewWriter struct {
	env *testenv.Env
	rec *reviewRecorder
	ns  string
	n   int
	// hooks is whether the validating webhooks are installed.
	hooks bool
}

// checkEveryWrite makes each kind of v1beta1 write to a TaskRun, each on a
// fresh run, and checks the reviews each one caused.
func (w *reviewWriter) checkEveryWrite(t *testing.T, want []string) {
	ctx := context.Background()
	c := w.env.Client
	for _, write := range []struct {
		name string
		// run, if set, changes the run before it is created; webhook is
		// then the admission webhook the create must reach.
		run     func(*v1beta1.TaskRun)
		webhook string
		write   func(*v1beta1.TaskRun) error
	}{
		{name: "create"},
		{name: "create naming a ServiceAccount", webhook: "/validate-minitask-dev-v1beta1-taskrun",
			run: func(run *v1beta1.TaskRun) { run.Spec.ServiceAccountName = "builder" }},
		{name: "create big enough for the stash guard", webhook: stashguard.TaskRunPath,
			run: func(run *v1beta1.TaskRun) {
				run.Spec.Params = []v1beta1.Param{{Name: "big", Value: strings.Repeat("x", 45<<10)}}
			}},
		{name: "status update", write: func(run *v1beta1.TaskRun) error {
			run.Status.PodName = run.Name + "-pod"
			return c.Status().Update(ctx, run)
		}},
		{name: "status merge patch", write: func(run *v1beta1.TaskRun) error {
			return c.Status().Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"status":{"podName":"p"}}`)))
		}},
		{name: "metadata merge patch", write: func(run *v1beta1.TaskRun) error {
			return c.Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`)))
		}},
		{name: "server-side apply", write: func(run *v1beta1.TaskRun) error {
			apply := &unstructured.Unstructured{}
			apply.SetAPIVersion(v1beta1.GroupVersion.String())
			apply.SetKind("TaskRun")
			apply.SetNamespace(run.Namespace)
			apply.SetName(run.Name)
			apply.SetLabels(map[string]string{"team": "b"})
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner("reviews-test"), client.ForceOwnership)
		}},
		{name: "delete", write: func(run *v1beta1.TaskRun) error { return c.Delete(ctx, run) }},
	} {
		t.Run(write.name, func(t *testing.T) {
			run := w.newRun()
			if write.run != nil {
				write.run(run)
			}
			calls := webhookCalls(t, write.webhook)
			w.rec.take()
			if err := c.Create(ctx, run); err != nil {
				t.Fatalf("creating %s: %v", run.Name, err)
			}
			if write.webhook != "" && webhookCalls(t, write.webhook) == calls && w.hooks {
				t.Errorf("the create did not reach %s", write.webhook)
			}
			if write.write != nil {
				w.rec.wait(len(want))
				if err := write.write(run); err != nil {
					t.Fatalf("%s of %s: %v", write.name, run.Name, err)
				}
			}
			if diff := cmp.Diff(want, w.rec.wait(len(want)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reviews of one v1beta1 %s (-want +got):\n%s", write.name, diff)
			}
		})
	}
}

// webhookCalls is how many requests the webhook at path has served.
func webhookCalls(t *testing.T, path string) float64 {
	t.Helper()
	if path == "" {
		return 0
	}
	return testenv.CounterValue(t, "controller_runtime_webhook_requests_total", map[string]string{"webhook": path})
}

func (w *reviewWriter) newRun() *v1beta1.TaskRun {
	w.n++
	return &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("run-%d", w.n), Namespace: w.ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
}

// watchV1alpha1 opens n watches of v1alpha1 TaskRuns in the namespace, as a
// v1alpha1 informer would, reading every event they send.
func (w *reviewWriter) watchV1alpha1(t *testing.T, n int) (stop func()) {
	t.Helper()
	wc, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// From now on, as an informer watches after its LIST: the runs already
	// there are not sent (a v1beta1 LIST, which converts nothing, gives now).
	now := &v1beta1.TaskRunList{}
	if err := w.env.Client.List(context.Background(), now, client.InNamespace(w.ns), client.Limit(1)); err != nil {
		t.Fatal(err)
	}
	var stops []func()
	for range n {
		watch, err := wc.Watch(context.Background(), &v1alpha1.TaskRunList{}, client.InNamespace(w.ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: now.ResourceVersion}})
		if err != nil {
			t.Fatalf("watching v1alpha1 TaskRuns: %v", err)
		}
		go func() {
			for range watch.ResultChan() {
			}
		}()
		stops = append(stops, watch.Stop)
	}
	w.rec.wait(0)
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// dropValidatingWebhooks deletes every ValidatingWebhookConfiguration and
// waits until the API server no longer calls the stash guard: a v1alpha1
// TaskRun with a forged annotation, which it refuses, is admitted (dry run).
func (w *reviewWriter) dropValidatingWebhooks(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := w.env.Client
	if err := c.DeleteAllOf(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{}); err != nil {
		t.Fatalf("deleting the validating webhooks: %v", err)
	}
	forged := &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: w.ns,
		Annotations: map[string]string{"minitask.dev/conversion-data": `{"v1beta1":{"spec":{"status":"Paused"}}}`}},
		Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(ctx, forged.DeepCopy(), client.DryRunAll)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stash guard still refuses a forged annotation 30 s after its configuration was deleted: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	w.rec.take()
	w.hooks = false
}

// reviewRecorder records every ConversionReview the API server sends, as
// "FROM->TO" (the version of each object sent, and desiredAPIVersion), then
// hands it to the handler that ships.
type reviewRecorder struct {
	next http.Handler

	mu      sync.Mutex
	reviews []string
	delay   time.Duration
}

// setup registers every webhook, as the manager does, with the recorder in
// front of /convert.
func (r *reviewRecorder) setup(mgr ctrl.Manager) error {
	return webhooks.SetupWithManager(recordingManager{Manager: mgr, rec: r})
}

func (r *reviewRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in struct {
		Request struct {
			DesiredAPIVersion string                      `json:"desiredAPIVersion"`
			Objects           []unstructured.Unstructured `json:"objects"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &in); err == nil {
		var from []string
		for _, o := range in.Request.Objects {
			from = append(from, shortVersion(o.GetAPIVersion()))
		}
		r.mu.Lock()
		r.reviews = append(r.reviews, strings.Join(from, ",")+"->"+shortVersion(in.Request.DesiredAPIVersion))
		delay := r.delay
		r.mu.Unlock()
		time.Sleep(delay)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.next.ServeHTTP(w, req)
}

func shortVersion(apiVersion string) string {
	return strings.TrimPrefix(apiVersion, v1beta1.GroupVersion.Group+"/")
}

func (r *reviewRecorder) setDelay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// take returns the reviews recorded since the last take, sorted.
func (r *reviewRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reviews
	r.reviews = nil
	sort.Strings(out)
	return out
}

// wait takes the reviews once at least n have come (the watch cache decodes
// a change after the write has returned), or after 30 s, and after a quiet
// half second in which any review more would show.
func (r *reviewRecorder) wait(n int) []string {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		got := len(r.reviews)
		r.mu.Unlock()
		if got >= n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	return r.take()
}

// recordingManager is the manager the webhooks are set up on, whose webhook
// server puts rec in front of the conversion handler.
type recordingManager struct {
	ctrl.Manager
	rec *reviewRecorder
}

func (m recordingManager) GetWebhookServer() webhook.Server {
	return recordingServer{Server: m.Manager.GetWebhookServer(), rec: m.rec}
}

type recordingServer struct {
	webhook.Server
	rec *reviewRecorder
}

func (s recordingServer) Register(path string, hook http.Handler) {
	if path == conversion.Path {
		s.rec.next = hook
		hook = s.rec
	}
	s.Server.Register(path, hook)
}
