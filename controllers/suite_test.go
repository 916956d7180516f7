package controllers_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// env is the API server that the tests of this package share. It is nil under
// -short, which runs the unit tests only.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// harness is one test's namespace, the controller that runs in it, and the
// writes that controller attempts.
type harness struct {
	*testenv.Harness
	writes *countingClient
}

// newHarness makes a namespace for the test on the package's API server.
func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOn(t, env)
}

// newHarnessOn makes a namespace for the test on e, an API server the test
// started for itself.
func newHarnessOn(t *testing.T, e *testenv.Env) *harness {
	t.Helper()
	return &harness{Harness: e.NewHarness(t)}
}

// startController starts a manager that runs the TaskRun controller, as
// main.go sets it up, on the harness's namespace only, and counts the
// controller's writes. It returns a function that stops the manager.
func (h *harness) startController(t *testing.T, defaultTimeout time.Duration) (stop func()) {
	t.Helper()
	return h.StartManager(t, func(mgr ctrl.Manager) error {
		h.writes = &countingClient{Client: mgr.GetClient()}
		r := &controllers.TaskRunReconciler{
			Client:         h.writes,
			Scheme:         mgr.GetScheme(),
			Recorder:       mgr.GetEventRecorder("minitask-controller"),
			DefaultTimeout: defaultTimeout,
		}
		return r.SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache = runcache.Options() })
}

// condition is the part of the Succeeded condition that the tests assert.
type condition struct {
	Status  metav1.ConditionStatus
	Reason  v1.TaskRunReason
	Message string
}

func succeededCondition(run *v1.TaskRun) condition {
	c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionSucceeded)
	if c == nil {
		return condition{}
	}
	return condition{c.Status, v1.TaskRunReason(c.Reason), c.Message}
}

// waitForCondition waits until run's Succeeded condition is want, and returns the run.
func (h *harness) waitForCondition(t *testing.T, name string, want condition) *v1.TaskRun {
	t.Helper()
	var run *v1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.TaskRun(t, name)
		got := succeededCondition(run)
		return got == want, cmp.Diff(want, got)
	}, "TaskRun %s's Succeeded condition (-want +got)", name)
	return run
}

// pods lists the Pods that minitask runs for a TaskRun.
func (h *harness) pods(t *testing.T, run string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := h.Env.Client.List(context.Background(), &pods, client.InNamespace(h.NS), client.MatchingLabels{runstate.LabelTaskRun: run}); err != nil {
		t.Fatalf("listing Pods: %v", err)
	}
	return pods.Items
}

// events lists the reasons of the Events about a TaskRun, oldest first, and
// how often each was seen.
func (h *harness) events(t *testing.T, run string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := h.Env.Client.List(context.Background(), &list, client.InNamespace(h.NS)); err != nil {
		t.Fatalf("listing Events: %v", err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind != "TaskRun" || e.Regarding.Name != run {
			continue
		}
		seen := 1
		if e.Series != nil {
			seen = int(e.Series.Count)
		}
		reasons = append(reasons, fmt.Sprintf("%s x%d", e.Reason, seen))
	}
	return reasons
}

// write is one write the controller attempted.
type write struct {
	Verb, Kind, Name string
	// Err is the error the API server answered, if any.
	Err string
	// At is when the write was attempted.
	At time.Time
}

// countingClient counts the writes the controller attempts through it,
// failed ones included.
type countingClient struct {
	client.Client
	mu     sync.Mutex
	writes []write
	// afterCreate, if set, is called with each object the controller
	// created, right after the API server did: a test's stand-in for what
	// happens before the controller looks again.
	afterCreate func(client.Object)
}

// record notes a write of obj, then makes it with call; it notes the write
// before it is made, so that a test that sees its effect sees it counted.
func (c *countingClient) record(verb string, obj client.Object, call func() error) error {
	gvk, _ := c.GroupVersionKindFor(obj)
	c.mu.Lock()
	i := len(c.writes)
	c.writes = append(c.writes, write{Verb: verb, Kind: gvk.Kind, Name: obj.GetName(), At: time.Now()})
	c.mu.Unlock()
	err := call()
	if err != nil {
		c.mu.Lock()
		c.writes[i].Err = err.Error()
		c.mu.Unlock()
	}
	return err
}

// of returns the writes to objects named name, or to every object if name is empty.
func (c *countingClient) of(name string) []write {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []write
	for _, w := range c.writes {
		if name == "" || w.Name == name {
			out = append(out, w)
		}
	}
	return out
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.record("create", obj, func() error { return c.Client.Create(ctx, obj, opts...) })
	c.mu.Lock()
	after := c.afterCreate
	c.mu.Unlock()
	if err == nil && after != nil {
		after(obj)
	}
	return err
}

// onCreate sets afterCreate.
func (c *countingClient) onCreate(after func(client.Object)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afterCreate = after
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.record("update", obj, func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.record("patch", obj, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.record("delete", obj, func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return c.record("deletecollection", obj, func() error { return c.Client.DeleteAllOf(ctx, obj, opts...) })
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

func (c *countingClient) SubResource(name string) client.SubResourceClient {
	panic("the controller writes no subresource but status, through Status(): " + name)
}

type countingStatus struct {
	client.SubResourceWriter
	c *countingClient
}

func (s *countingStatus) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.c.record("create status", obj, func() error { return s.SubResourceWriter.Create(ctx, obj, sub, opts...) })
}

func (s *countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.record("update status", obj, func() error { return s.SubResourceWriter.Update(ctx, obj, opts...) })
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.record("patch status", obj, func() error { return s.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

// isNotFound reports whether getting obj says it does not exist.
func isNotFound(key client.ObjectKey, obj client.Object) bool {
	return apierrors.IsNotFound(env.Client.Get(context.Background(), key, obj))
}

// readCounter counts the reads through it, made or refused, that counts
// picks: a test's APIReader, to count what the controller asks the API
// server for past its cache.
type readCounter struct {
	client.Reader
	counts func(obj client.Object, err error) bool
	n      atomic.Int64
}

func (c *readCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Reader.Get(ctx, key, obj, opts...)
	if c.counts(obj, err) {
		c.n.Add(1)
	}
	return err
}
