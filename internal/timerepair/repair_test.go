package timerepair_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/timerepair"
	"github.com/minitask-dev/minitask/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// storedByRelease2 is a finished TaskRun as release 2's CRD let a status
// writer store it: times in lower case, or with a zone offset past 24 hours
// (the step's startedAt), which metav1.Time cannot read. Its attempt's times
// are as malformed, as a writer that bypassed release 3's patterns (or a
// restore from a backup) could leave them.
const storedByRelease2 = `{
  "apiVersion": "minitask.dev/v1beta1", "kind": "TaskRun",
  "spec": {"taskRef": {"name": "build"}},
  "status": {
    "startTime": "2024-05-01t10:00:00z",
    "completionTime": "2024-05-01 10:05:00Z",
    "conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded", "message": "",
                    "lastTransitionTime": "2024-05-01t10:05:00z"}],
    "steps": [{"name": "compile", "state": "Terminated", "exitCode": 0,
               "startedAt": "2024-05-02T11:00:01+25:00", "finishedAt": "2024-05-01t12:04:59+02:00"}],
    "attempts": [{"podName": "malformed-pod", "reason": "PodFailed", "message": "evicted",
                  "startTime": "2024-05-01T09:00:00", "completionTime": "2024-05-01t09:59:59.5z"}]
  }
}`

// TestRepairMakesStoredRunsReadable stores a TaskRun with malformed times
// directly in etcd, as an earlier release could, and checks that before the
// repair a typed LIST of the namespace fails, as the controller's cache
// would, and after it succeeds with the same instants; a well-formed run is
// not written.
func TestRepairMakesStoredRunsReadable(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	env.PutInEtcd(t, "taskruns", ns, "malformed", []byte(storedByRelease2))
	good := &v1beta1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"},
		Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "build"}},
	}
	if err := env.Client.Create(ctx, good); err != nil {
		t.Fatal(err)
	}

	if err := env.Client.List(ctx, &v1beta1.TaskRunList{}, client.InNamespace(ns)); err == nil {
		t.Fatal("a typed LIST read the malformed times; the test proves nothing")
	}
	repaired, err := (&timerepair.Repairer{Config: env.Config, Writer: env.Client}).Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if repaired != 1 {
		t.Errorf("repaired %d TaskRuns, want 1", repaired)
	}

	list := &v1beta1.TaskRunList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatalf("typed LIST after the repair: %v", err)
	}
	at := func(clock string) metav1.Time {
		parsed, err := time.Parse(time.RFC3339, "2024-05-01T"+clock+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return metav1.NewTime(parsed)
	}
	for _, run := range list.Items {
		if run.Name == good.Name {
			if run.ResourceVersion != good.ResourceVersion {
				t.Errorf("the well-formed run was written (resourceVersion %s -> %s)", good.ResourceVersion, run.ResourceVersion)
			}
			continue
		}
		got := []metav1.Time{*run.Status.StartTime, *run.Status.CompletionTime, run.Status.Conditions[0].LastTransitionTime,
			*run.Status.Steps[0].StartedAt, *run.Status.Steps[0].FinishedAt,
			*run.Status.Attempts[0].StartTime, *run.Status.Attempts[0].CompletionTime}
		want := []metav1.Time{at("10:00:00"), at("10:05:00"), at("10:05:00"), at("10:00:01"), at("10:04:59"),
			at("09:00:00"), at("09:59:59")}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
			t.Errorf("repaired times (-want +got):\n%s", diff)
		}
	}

	again, err := (&timerepair.Repairer{Config: env.Config, Writer: env.Client}).Repair(ctx)
	if err != nil || again != 0 {
		t.Errorf("a second repair patched %d runs (error %v), want 0", again, err)
	}
}

// TestRepairReadsEveryPage stores more runs than one LIST page holds, the
// malformed one last, and checks that the repair follows the continue token
// of the real API server to it.
func TestRepairReadsEveryPage(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const wellFormed = 510 // past one page of 500
	names := make(chan string)
	errs := make(chan error, wellFormed)
	var workers sync.WaitGroup
	for range 8 {
		workers.Go(func() {
			for name := range names {
				errs <- env.Client.Create(ctx, &v1beta1.TaskRun{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "build"}},
				})
			}
		})
	}
	for i := range wellFormed {
		names <- fmt.Sprintf("good-%03d", i)
	}
	close(names)
	workers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	env.PutInEtcd(t, "taskruns", ns, "zz-malformed", []byte(storedByRelease2))

	repaired, err := (&timerepair.Repairer{Config: env.Config, Writer: env.Client}).Repair(ctx)
	if err != nil || repaired != 1 {
		t.Fatalf("repaired %d TaskRuns (error %v), want 1", repaired, err)
	}
	run := &v1beta1.TaskRun{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zz-malformed"}, run); err != nil {
		t.Fatalf("typed GET of the run on the second page after the repair: %v", err)
	}
}

// refusedAttempt is an attempt the CRD refuses (no podName, no reason) in
// a list the API server cannot ratchet (attempts is listType=atomic): a
// run stored with it, as a restore from a backup could leave it, has every
// update refused, the repair's patch included.
const refusedAttempt = `{"message": "stored past validation"}`

// TestRepairGoesOnPastRunsItCannotPatch stores malformed runs, in the order
// the LIST returns them: one deleted between the LIST and its patch, one
// written meanwhile (so that the patch's test fails), one the API server
// refuses, and one that can be repaired. Each failure is the API server's
// own answer. The repair must patch the last one all the same, name the
// refused one in its error, and repair the one written meanwhile from what
// it holds then, keeping what the other writer set.
func TestRepairGoesOnPastRunsItCannotPatch(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, name := range []string{"a-deleted", "b-written", "d-repairable"} {
		env.PutInEtcd(t, "taskruns", ns, name, []byte(storedByRelease2))
	}
	refused := strings.Replace(storedByRelease2, `"attempts": [`, `"attempts": [`+refusedAttempt+`, `, 1)
	env.PutInEtcd(t, "taskruns", ns, "c-refused", []byte(refused))
	t.Cleanup(func() {
		run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c-refused"}}
		if err := env.Client.Delete(ctx, run); err != nil {
			t.Errorf("deleting the run the repair could not patch, so that later tests find none: %v", err)
		}
	})

	const concurrentStart = "2024-05-01T11:00:00Z"
	var written atomic.Bool
	writer := interceptor.NewClient(watchingClient(t), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if obj.GetNamespace() == ns {
				switch obj.GetName() {
				case "a-deleted":
					if err := c.Delete(ctx, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: obj.GetName()}}); err != nil {
						t.Errorf("deleting %s before its patch: %v", obj.GetName(), err)
					}
				case "b-written":
					if written.Swap(true) {
						break
					}
					// A writer that sets two of the run's times anew, as a
					// controller would: each is validated, so RFC 3339.
					other := &metav1.PartialObjectMetadata{}
					other.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRun"))
					other.SetNamespace(ns)
					other.SetName(obj.GetName())
					write := client.RawPatch(types.JSONPatchType, []byte(`[
						{"op": "replace", "path": "/status/startTime", "value": "`+concurrentStart+`"},
						{"op": "replace", "path": "/status/conditions/0/lastTransitionTime", "value": "`+concurrentStart+`"}]`))
					if err := c.Status().Patch(ctx, other, write); err != nil {
						t.Errorf("writing %s before its patch: %v", obj.GetName(), err)
					}
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})

	_, err := (&timerepair.Repairer{Config: env.Config, Writer: writer}).Repair(ctx)
	var incomplete *timerepair.IncompleteError
	if !errors.As(err, &incomplete) {
		t.Fatalf("Repair returned %v, want an *IncompleteError naming the refused run", err)
	}
	var notRepaired []string
	for key, err := range incomplete.Failed {
		notRepaired = append(notRepaired, key.String())
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want the API server's Invalid", key, err)
		}
	}
	if diff := cmp.Diff([]string{ns + "/c-refused"}, notRepaired); diff != "" {
		t.Errorf("runs not repaired (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), ns+"/c-refused") {
		t.Errorf("the error does not name the refused run: %v", err)
	}

	repairable := &v1beta1.TaskRun{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d-repairable"}, repairable); err != nil {
		t.Errorf("typed GET of the run after the refused one: %v", err)
	}
	rewritten := &v1beta1.TaskRun{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b-written"}, rewritten); err != nil {
		t.Fatalf("typed GET of the run written meanwhile: %v", err)
	}
	if got := rewritten.Status.StartTime.UTC().Format(time.RFC3339); got != concurrentStart {
		t.Errorf("startTime of the run written meanwhile = %s, want the other writer's %s", got, concurrentStart)
	}
}

// TestStartTriesAgainWhenTheAPIServerCannotServe has the first status patch
// answered 503, as an overloaded API server would: the pass stops there
// rather than wait out the same error for every run, and Start makes it
// again until both runs are repaired.
func TestStartTriesAgainWhenTheAPIServerCannotServe(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, name := range []string{"a", "b"} {
		env.PutInEtcd(t, "taskruns", ns, name, []byte(storedByRelease2))
	}
	var mu sync.Mutex
	var patched []string
	unavailable := true
	writer := interceptor.NewClient(watchingClient(t), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if obj.GetNamespace() == ns {
				mu.Lock()
				patched = append(patched, obj.GetName())
				first := unavailable
				unavailable = false
				mu.Unlock()
				if first {
					return apierrors.NewServiceUnavailable("etcd is down")
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	repairer := &timerepair.Repairer{Config: env.Config, Writer: writer,
		Backoff: wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1, Steps: 1 << 30}}

	if _, err := repairer.Repair(ctx); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("a pass whose patch was answered 503 returned %v, want that error", err)
	}
	if diff := cmp.Diff([]string{"a"}, patched); diff != "" {
		t.Errorf("patches tried by the pass that met a 503 (-want +got):\n%s", diff)
	}

	unavailable = true
	patched = nil
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := repairer.Start(startCtx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "a", "b"}, patched); diff != "" {
		t.Errorf("patches tried by Start (-want +got):\n%s", diff)
	}
	if err := env.Client.List(ctx, &v1beta1.TaskRunList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("typed LIST after Start: %v", err)
	}
}

// watchingClient is a client of the test API server that interceptor can wrap.
func watchingClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
