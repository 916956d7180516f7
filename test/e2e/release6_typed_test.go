//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
)

// What only release 6 runs, in the rollback rehearsal: a Task with an array
// param and a run of it, written through v1 while release 6's webhooks
// serve and no controller runs, in a namespace of their own so that the
// rehearsal's checks of every object in its namespace, which compare v1
// with v1beta1 views of string params, leave them to the checks here.
const (
	typedNS   = "typed"
	typedTask = "list-files"
	typedRun  = "list-files-unstarted"
)

// createRelease6Only writes the typed Task and run (see above). Call it
// with the controller stopped: release 6 would start the run.
func (r *v1Rehearsal) createRelease6Only() {
	task := &minitaskv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: typedNS, Name: typedTask},
		Spec: minitaskv1.TaskSpec{
			Params: []minitaskv1.ParamSpec{{Name: "files", Type: minitaskv1.ParamTypeArray}},
			Steps: []minitaskv1.Step{{Name: "list", Image: "alpine:3",
				Command: []string{"ls"}, Args: []string{"-l", "$(params.files[*])"}}},
		},
	}
	run := &minitaskv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: typedNS, Name: typedRun},
		Spec: minitaskv1.TaskRunSpec{
			TaskRef: minitaskv1.TaskRef{Name: typedTask},
			Params:  []minitaskv1.Param{{Name: "files", Value: *minitaskv1.NewArrayValue("a.go", "b c.go")}},
		},
	}
	create(r.t, r.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: typedNS}}, task, run)
}

// checkRelease6OnlyWaits checks that release 5's controller leaves the typed
// run Pending, its message naming release 6, with no Pod.
func (r *v1Rehearsal) checkRelease6OnlyWaits() {
	r.t.Helper()
	waitFor(r.t, time.Minute, "release 5 to leave the typed run Pending for release 6", func(ctx context.Context) error {
		run, err := r.typedRun(ctx)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(run.Status.Conditions, minitaskv1.ConditionSucceeded)
		if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != string(minitaskv1.ReasonPending) ||
			!strings.Contains(cond.Message, "needs minitask release 6") {
			return fmt.Errorf("its condition is %+v", cond)
		}
		return nil
	})
	if pods := r.typedPods(); len(pods) != 0 {
		r.t.Errorf("release 5 made Pods %v for TaskRun %s/%s, which only release 6 runs", pods, typedNS, typedRun)
	}
}

// checkRelease6OnlyRan checks that, rolled forward, release 6 ran the typed
// run: it succeeded, through one Pod whose args hold one item each.
func (r *v1Rehearsal) checkRelease6OnlyRan() {
	r.t.Helper()
	waitFor(r.t, time.Minute, "release 6 to run the typed run after the roll forward", func(ctx context.Context) error {
		run, err := r.typedRun(ctx)
		if err != nil {
			return err
		}
		if got := outcome(run); got != "True/Succeeded" {
			return fmt.Errorf("it is %s: %s", got, conditionMessage(run))
		}
		return nil
	})
	pods := r.typedPods()
	if len(pods) != 1 {
		r.t.Fatalf("TaskRun %s/%s has Pods %v, want one", typedNS, typedRun, pods)
	}
	if diff := cmp.Diff([]string{"-l", "a.go", "b c.go"}, pods[0].Spec.Containers[0].Args); diff != "" {
		r.t.Errorf("the args of the typed run's step (-want +got):\n%s", diff)
	}
}

func (r *v1Rehearsal) typedRun(ctx context.Context) (*minitaskv1.TaskRun, error) {
	run := &minitaskv1.TaskRun{}
	return run, r.c.client.Get(ctx, client.ObjectKey{Namespace: typedNS, Name: typedRun}, run)
}

func (r *v1Rehearsal) typedPods() []corev1.Pod {
	var pods corev1.PodList
	if err := r.c.client.List(context.Background(), &pods, client.InNamespace(typedNS)); err != nil {
		r.t.Fatal(err)
	}
	return pods.Items
}
