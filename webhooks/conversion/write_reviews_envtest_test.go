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
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// Every change of a TaskRun costs one conversion review per served version
// that is not stored: since release 6 stores v1, v1 to v1alpha1 and v1 to
// v1beta1, whoever made the change and whichever version they wrote
// through. A write through v1beta1, which is no longer stored, costs its
// own reviews besides: its object to v1 to store it, and what was stored
// back to v1beta1 for the answer (and an update, the stored object as the
// v1beta1 watch cache holds it to v1 again, to compare with what etcd
// holds). These tests pin where each comes from (docs/conversion.md,
// "Conversion reviews on v1beta1 writes"): the API server keeps one storage, and
// so one watch cache, per served version; each decodes every change it
// sees in etcd into its own version, whoever wrote it and whether or not
// anyone watches that version.

// watchCaches is what one change of one TaskRun costs whoever writes it:
// the v1alpha1 and the v1beta1 watch caches' decodes of it.
var watchCaches = []string{"v1->v1alpha1", "v1->v1beta1"}

// The kinds of write, for what each costs its writer.
const (
	create       = "create"
	update       = "update"
	statusUpdate = "status update"
	remove       = "delete"
)

// v1beta1Request is what a v1beta1 write of each kind costs itself, its
// watch caches aside, with the API server's watch cache on: a create, the
// new object to v1 and the stored one back to v1beta1 for the answer; an
// update (status or not, patch, server-side apply), besides, the stored
// object, which it takes from the v1beta1 watch cache, to v1 again to
// compare with what etcd holds; a delete, that, the stored object for the
// answer, and the deleted one as etcd hands it back.
var v1beta1Request = map[string][]string{
	create:       {"v1->v1beta1", "v1beta1->v1"},
	update:       {"v1->v1beta1", "v1beta1->v1", "v1beta1->v1"},
	statusUpdate: {"v1->v1beta1", "v1beta1->v1", "v1beta1->v1"},
	remove:       {"v1->v1beta1", "v1->v1beta1", "v1beta1->v1"},
}

// v1beta1RequestWithoutCache is v1beta1Request with no watch cache: an
// update or a delete then reads the stored object from etcd, into v1beta1,
// rather than take it from the cache.
var v1beta1RequestWithoutCache = map[string][]string{
	create:       {"v1->v1beta1", "v1beta1->v1"},
	update:       {"v1->v1beta1", "v1->v1beta1", "v1beta1->v1"},
	statusUpdate: {"v1->v1beta1", "v1->v1beta1", "v1beta1->v1"},
	remove:       {"v1->v1beta1", "v1->v1beta1", "v1->v1beta1"},
}

// v1beta1Webhooks is what the webhooks whose rules name v1 alone, with
// matchPolicy Equivalent, add to a v1beta1 write: the API server converts
// the object to v1 to judge their match conditions, even when they do not
// match: the ServiceAccount check's, on every create, and the
// condition-times check's, on every status update, the object and the
// stored one. A v1 write, the controller's and kubectl task's, costs
// nothing but its watch caches' reviews: every webhook names v1.
var v1beta1Webhooks = map[string][]string{
	create:       {"v1beta1->v1"},
	statusUpdate: {"v1beta1->v1", "v1beta1->v1"},
}

// join returns each kind's reviews of a and b together.
func join(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, kind := range []string{create, update, statusUpdate, remove} {
		out[kind] = append(append([]string{}, a[kind]...), b[kind]...)
	}
	return out
}

// plus returns each kind's reviews with more appended, sorted as the
// recorder takes them.
func plus(request map[string][]string, more ...string) map[string][]string {
	out := map[string][]string{}
	for _, kind := range []string{create, update, statusUpdate, remove} {
		reviews := append(append([]string{}, request[kind]...), more...)
		sort.Strings(reviews)
		out[kind] = reviews
	}
	return out
}

func TestConversionReviewsOnV1beta1Writes(t *testing.T) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(t, rec.setup)
	w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(t), version: "v1beta1", hooks: true}
	want := plus(join(v1beta1Request, v1beta1Webhooks), watchCaches...)

	t.Run("all webhooks", func(t *testing.T) { w.checkEveryWrite(t, want) })
	t.Run("a write straight into etcd", func(t *testing.T) {
		// No API request at all: nothing but the watch caches see this
		// change, made as release 6 stores it.
		w.rec.take()
		env.PutInEtcd(t, "taskruns", w.ns, "from-etcd", []byte(`{"apiVersion":"minitask.dev/v1","kind":"TaskRun","spec":{"taskRef":{"name":"t"}}}`))
		if diff := cmp.Diff(watchCaches, w.rec.wait(len(watchCaches))); diff != "" {
			t.Errorf("reviews (-want +got):\n%s", diff)
		}
	})
	t.Run("a v1alpha1 watch open", func(t *testing.T) {
		// Its watchers share the cache's v1alpha1 objects: no review more.
		stop := w.watchV1alpha1(t, 3)
		defer stop()
		w.checkEveryWrite(t, want)
	})
	t.Run("no validating webhooks", func(t *testing.T) {
		w.dropValidatingWebhooks(t)
		w.checkEveryWrite(t, plus(v1beta1Request, watchCaches...))
	})
}

// TestConversionReviewsOnV1Writes pins what a write through v1, the storage
// version, costs: the watch caches' reviews, no more (v1beta1Webhooks). It
// is what the controller's writes and kubectl task's cost.
func TestConversionReviewsOnV1Writes(t *testing.T) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(t, rec.setup)
	w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(t), version: "v1", hooks: true}
	w.checkEveryWrite(t, plus(nil, watchCaches...))
}

// TestConversionReviewsWithoutWatchCache proves the attribution: with the
// API server's watch cache off (--watch-cache=false, a cluster-wide flag; the
// API server has no per-resource one for custom resources) a v1beta1 write
// costs only its own reviews (and its webhooks'), and it is a v1alpha1 watcher that pays for
// the rest, one review per change and per watcher, since each watch then
// decodes from etcd on its own.
func TestConversionReviewsWithoutWatchCache(t *testing.T) {
	rec := &reviewRecorder{}
	env := testenv.ForTest(t, rec.setup, func(e *envtest.Environment) {
		e.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
	})
	w := &reviewWriter{env: env, rec: rec, ns: env.Namespace(t), version: "v1beta1", hooks: true}

	own := join(v1beta1RequestWithoutCache, v1beta1Webhooks)
	t.Run("no watcher", func(t *testing.T) { w.checkEveryWrite(t, plus(own)) })
	t.Run("two v1alpha1 watches open", func(t *testing.T) {
		stop := w.watchV1alpha1(t, 2)
		defer stop()
		w.checkEveryWrite(t, plus(own, "v1->v1alpha1", "v1->v1alpha1"))
	})
}

// reviewWriter makes the writes whose reviews a test counts, through one
// version.
type reviewWriter struct {
	env *testenv.Env
	rec *reviewRecorder
	ns  string
	n   int
	// version is the version written through: v1beta1 or v1.
	version string
	// hooks is whether the validating webhooks are installed.
	hooks bool
}

// checkEveryWrite makes each kind of write to a TaskRun, each on a fresh
// run, and checks the reviews each one caused: want, by the kind of write.
func (w *reviewWriter) checkEveryWrite(t *testing.T, want map[string][]string) {
	ctx := context.Background()
	c := w.env.Client
	for _, write := range []struct {
		name string
		kind string
		// run, if set, changes the run before it is created; webhook is
		// then the admission webhook the create must reach.
		run     func(*unstructured.Unstructured)
		webhook string
		write   func(*unstructured.Unstructured) error
	}{
		{name: "create", kind: create},
		{name: "create naming a ServiceAccount", kind: create, webhook: validation.TaskRunPath,
			run: func(run *unstructured.Unstructured) { set(t, run, "builder", "spec", "serviceAccountName") }},
		{name: "create big enough for the stash guard", kind: create, webhook: stashguard.TaskRunPath,
			run: func(run *unstructured.Unstructured) {
				set(t, run, []any{map[string]any{"name": "big", "value": strings.Repeat("x", 45<<10)}}, "spec", "params")
			}},
		{name: "status update", kind: statusUpdate, write: func(run *unstructured.Unstructured) error {
			set(t, run, run.GetName()+"-pod", "status", "podName")
			return c.Status().Update(ctx, run)
		}},
		{name: "status merge patch", kind: statusUpdate, write: func(run *unstructured.Unstructured) error {
			return c.Status().Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"status":{"podName":"p"}}`)))
		}},
		{name: "metadata merge patch", kind: update, write: func(run *unstructured.Unstructured) error {
			return c.Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`)))
		}},
		{name: "server-side apply", kind: update, write: func(run *unstructured.Unstructured) error {
			apply := &unstructured.Unstructured{}
			apply.SetAPIVersion(run.GetAPIVersion())
			apply.SetKind("TaskRun")
			apply.SetNamespace(run.GetNamespace())
			apply.SetName(run.GetName())
			apply.SetLabels(map[string]string{"team": "b"})
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner("reviews-test"), client.ForceOwnership)
		}},
		{name: "delete", kind: remove, write: func(run *unstructured.Unstructured) error { return c.Delete(ctx, run) }},
	} {
		t.Run(write.name, func(t *testing.T) {
			run := w.newRun()
			if write.run != nil {
				write.run(run)
			}
			calls := webhookCalls(t, write.webhook)
			w.rec.take()
			if err := c.Create(ctx, run); err != nil {
				t.Fatalf("creating %s: %v", run.GetName(), err)
			}
			if write.webhook != "" && webhookCalls(t, write.webhook) == calls && w.hooks {
				t.Errorf("the create did not reach %s", write.webhook)
			}
			if write.write != nil {
				w.rec.wait(len(want[create]))
				if err := write.write(run); err != nil {
					t.Fatalf("%s of %s: %v", write.name, run.GetName(), err)
				}
			}
			if diff := cmp.Diff(want[write.kind], w.rec.wait(len(want[write.kind])), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reviews of one %s %s (-want +got):\n%s", w.version, write.name, diff)
			}
		})
	}
}

// set sets the field at path of obj to value.
func set(t *testing.T, obj *unstructured.Unstructured, value any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
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

// newRun is a new TaskRun in the writer's version.
func (w *reviewWriter) newRun() *unstructured.Unstructured {
	w.n++
	run := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"taskRef": map[string]any{"name": "t"}}}}
	run.SetAPIVersion(v1beta1.GroupVersion.Group + "/" + w.version)
	run.SetKind("TaskRun")
	run.SetNamespace(w.ns)
	run.SetName(fmt.Sprintf("run-%s-%d", w.version, w.n))
	return run
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
func (w *reviewWriter) dropValidatingWebhooks(t testing.TB) {
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
