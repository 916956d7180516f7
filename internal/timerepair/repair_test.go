package timerepair_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/timerepair"
	"github.com/minitask-dev/minitask/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }

// storedByRelease2 is a finished TaskRun as release 2's CRD let a status
// writer store it: every time in lower case, which metav1.Time cannot read.
// Its attempt's times are as malformed, as a writer that bypassed release
// 3's patterns (or a restore from a backup) could leave them.
const storedByRelease2 = `{
  "apiVersion": "minitask.dev/v1beta1", "kind": "TaskRun",
  "spec": {"taskRef": {"name": "build"}},
  "status": {
    "startTime": "2024-05-01t10:00:00z",
    "completionTime": "2024-05-01 10:05:00Z",
    "conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded", "message": "",
                    "lastTransitionTime": "2024-05-01t10:05:00z"}],
    "steps": [{"name": "compile", "state": "Terminated", "exitCode": 0,
               "startedAt": "2024-05-01t10:00:01z", "finishedAt": "2024-05-01t12:04:59+02:00"}],
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
