//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestCascadeDeletion deletes TaskRuns and checks that the garbage collector
// (kube-controller-manager) deletes their Pods: a running run's, deleted as
// `kubectl delete` does (in the background), and a finished run's, deleted
// in the foreground, where the run stays until its Pod is gone.
func TestCascadeDeletion(t *testing.T) {
	// Most of it is waiting for the garbage collector to find TaskRuns
	// (up to 40 s): it waits beside the upgrade rehearsals, which run in
	// parallel too, so that make test-e2e stays under 4 minutes.
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t, "cascade")
	startManager(t, c)
	gcWatchesTaskRuns := probeGarbageCollector(t, c)
	create(t, c,
		wrappers.Task(ns, "long").Step("wait", "alpine:3", "sleep 300").Obj(),
		wrappers.Task(ns, "short").Step("say", "alpine:3", "echo hi").Obj(),
		wrappers.TaskRun(ns, "running", "long").Obj(), wrappers.TaskRun(ns, "done", "short").Obj())
	waitFinished(t, c, time.Minute, "done")
	waitFor(t, time.Minute, "TaskRun running to run its step", func(ctx context.Context) error {
		run := &v1.TaskRun{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "running"}, run); err != nil {
			return err
		}
		if o := outcome(run); o != "Unknown/Running" {
			return errors.New(o)
		}
		return nil
	})

	gcWatchesTaskRuns()
	for _, name := range []string{"running", "done"} {
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runstate.PodName(runNamed(name))}, &corev1.Pod{}); err != nil {
			t.Fatalf("the Pod of TaskRun %s before the deletion: %v", name, err)
		}
	}

	start := time.Now()
	for name, policy := range map[string]metav1.DeletionPropagation{
		"running": metav1.DeletePropagationBackground,
		"done":    metav1.DeletePropagationForeground,
	} {
		run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := c.client.Delete(ctx, run, client.PropagationPolicy(policy)); err != nil {
			t.Fatalf("deleting TaskRun %s (%s): %v", name, policy, err)
		}
	}
	waitFor(t, time.Minute, "the runs and their Pods to be gone", func(ctx context.Context) error {
		for _, obj := range []client.Object{
			&v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "running"}},
			&v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "done"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: runstate.PodName(runNamed("running"))}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: runstate.PodName(runNamed("done"))}},
		} {
			err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.GetName()}, obj)
			if err == nil {
				return fmt.Errorf("%T %s is still there", obj, obj.GetName())
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	t.Logf("the runs and their Pods were gone %.1fs after the deletion", time.Since(start).Seconds())
}

// probeGarbageCollector returns a function that waits until
// kube-controller-manager's garbage collector watches TaskRuns. It looks for
// resources to watch every 30 seconds, and the cluster installed our CRDs
// after it started: until then, a TaskRun deleted in the foreground keeps
// its finalizer, and the Pod of one deleted in the background stays (for
// about 40s after the cluster was created, in practice). A run deleted in the
// foreground without dependents shows when it watches them: the collector
// removes its finalizer. The probe starts now, so that the wait overlaps
// what the test does meanwhile. It needs the manager: from release 6, which
// stores v1, every TaskRun write needs its webhooks (a v1beta1 one is
// converted, a v1 one judged by the stash guard).
func probeGarbageCollector(t testing.TB, c *cluster) (wait func()) {
	t.Helper()
	start := time.Now()
	probe := wrappers.TaskRun(ns, "gc-probe", "no-such-task").Obj()
	create(t, c, probe)
	if err := c.client.Delete(context.Background(), probe, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatalf("deleting TaskRun %s: %v", probe.Name, err)
	}
	return func() {
		t.Helper()
		waitFor(t, time.Minute, "the garbage collector to watch TaskRuns", func(ctx context.Context) error {
			err := c.client.Get(ctx, client.ObjectKeyFromObject(probe), probe)
			if err == nil {
				return fmt.Errorf("TaskRun %s still has finalizers %v", probe.Name, probe.Finalizers)
			}
			return client.IgnoreNotFound(err)
		})
		t.Logf("the garbage collector watches TaskRuns %.1fs after the probe", time.Since(start).Seconds())
	}
}
