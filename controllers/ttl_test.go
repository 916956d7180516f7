package controllers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// withTTL returns run with spec.ttlSecondsAfterFinished set.
func withTTL(run *v1.TaskRun, seconds int32) *v1.TaskRun {
	run.Spec.TTLSecondsAfterFinished = ptr.To(seconds)
	return run
}

// waitForDeletion waits until the run is marked for deletion, and returns it.
// The controller deletes in the foreground, and envtest runs no garbage
// collector, so the run stays, with the foregroundDeletion finalizer that the
// collector would remove once the run's Pods are gone.
func (h *harness) waitForDeletion(t *testing.T, name string) *v1.TaskRun {
	t.Helper()
	var run *v1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.TaskRun(t, name)
		return run.DeletionTimestamp != nil, "it is not marked for deletion"
	}, "TaskRun %s to be deleted", name)
	if !slices.Contains(run.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("TaskRun %s deleted with finalizers %q, want %s: a foreground deletion, which keeps it until its Pods are gone",
			name, run.Finalizers, metav1.FinalizerDeleteDependents)
	}
	return run
}

// finishRun lets a run's Pod succeed and waits for the run to finish.
func (h *harness) finishRun(t *testing.T, name string) *v1.TaskRun {
	t.Helper()
	h.Kubelet(t, name+"-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	return h.waitForCondition(t, name, condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
}

// TestTTLAfterFinished checks that the controller deletes a finished run at
// completionTime plus its spec.ttlSecondsAfterFinished, with no other write
// after it finished, and keeps a run without one when the default is 0.
func TestTTLAfterFinished(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	h.Create(t, twoSteps("t"))

	tests := map[string]struct {
		run *v1.TaskRun
		// after is how long after completionTime the run is deleted; nil: kept.
		after *time.Duration
	}{
		"TTL 3s":         {withTTL(wrappers.TaskRun("", "ttl-3", "t").Obj(), 3), ptr.To(3 * time.Second)},
		"TTL 0: at once": {withTTL(wrappers.TaskRun("", "ttl-0", "t").Obj(), 0), ptr.To(time.Duration(0))},
		"no TTL: kept":   {wrappers.TaskRun("", "kept", "t").Obj(), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h.Create(t, tc.run)
			finished := h.finishRun(t, tc.run.Name)
			if tc.after == nil {
				h.expectUntouched(t, finished)
				return
			}
			deleted := h.waitForDeletion(t, tc.run.Name)
			// Both times are whole seconds.
			if took := deleted.DeletionTimestamp.Sub(finished.Status.CompletionTime.Time); took < *tc.after || took > *tc.after+2*time.Second {
				t.Errorf("deleted %s after completionTime, want %s (to 2s more)", took, *tc.after)
			}
			// Nothing but the deletion after it finished: one delete, the
			// last write, and the status as it finished.
			writes := h.writes.of(tc.run.Name)
			deletes := 0
			for _, w := range writes {
				if w.Verb == "delete" {
					deletes++
				}
			}
			if last := writes[len(writes)-1]; deletes != 1 || last.Verb != "delete" || last.Err != "" {
				t.Errorf("writes to the run: %+v, want one delete, the last", writes)
			}
			if diff := cmp.Diff(finished.Status, deleted.Status); diff != "" {
				t.Errorf("the status of the run changed after it finished (-finished +deleted):\n%s", diff)
			}
		})
	}
}

// TestDefaultTTLAfterFinished checks --default-ttl-after-finished: it deletes
// runs without a TTL of their own, not those with one; and that a run that
// finished long before the manager started is deleted as soon as it starts.
func TestDefaultTTLAfterFinished(t *testing.T) {
	h := newHarness(t)
	h.Create(t, twoSteps("t"), withTTL(wrappers.TaskRun("", "long-ago", "t").Obj(), 60))
	longAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	h.UpdateTaskRunStatus(t, "long-ago", func(r *v1.TaskRun) {
		r.Status = v1.TaskRunStatus{StartTime: &longAgo, CompletionTime: &longAgo, Conditions: []metav1.Condition{{
			Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: string(v1.ReasonSucceeded),
			Message: "every step exited 0", LastTransitionTime: longAgo,
		}}}
	})

	started := time.Now()
	h.startControllerWith(t, func(r *controllers.TaskRunReconciler) { r.DefaultTTLAfterFinished = 2 * time.Second })
	h.waitForDeletion(t, "long-ago")
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("a run expired an hour before the manager started was deleted %s after it started, want at once", took)
	}

	h.Create(t, wrappers.TaskRun("", "defaulted", "t").Obj(), withTTL(wrappers.TaskRun("", "own-ttl", "t").Obj(), 3600))
	finished := h.finishRun(t, "defaulted")
	deleted := h.waitForDeletion(t, "defaulted")
	if took := deleted.DeletionTimestamp.Sub(finished.Status.CompletionTime.Time); took < 2*time.Second || took > 4*time.Second {
		t.Errorf("deleted %s after completionTime, want the default's 2s (to 2s more)", took)
	}
	h.expectUntouched(t, h.finishRun(t, "own-ttl"))
}

// staleReader is a client whose reads of one TaskRun return an old copy of
// it, as a cache that has not caught up would.
type staleReader struct {
	client.Client
	run *v1.TaskRun
}

func (c staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if run, ok := obj.(*v1.TaskRun); ok && key == client.ObjectKeyFromObject(c.run) {
		c.run.DeepCopyInto(run)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestTTLDeletesOnlyTheRunItJudged reconciles an expired run from a stale
// read: the API server refuses the deletion, by its preconditions, when a new
// run of the same name has replaced it, or when it changed since.
func TestTTLDeletesOnlyTheRunItJudged(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	finish := func(name string) *v1.TaskRun {
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		h.UpdateTaskRunStatus(t, name, func(r *v1.TaskRun) {
			r.Status = v1.TaskRunStatus{StartTime: &now, CompletionTime: &now, Conditions: []metav1.Condition{{
				Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: string(v1.ReasonStepFailed),
				Message: `step "first" exited with code 1`, LastTransitionTime: now,
			}}}
		})
		return h.TaskRun(t, name)
	}
	reconcile := func(stale *v1.TaskRun) {
		t.Helper()
		r := &controllers.TaskRunReconciler{Client: staleReader{Client: env.Client, run: stale}}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)}); err != nil {
			t.Fatalf("reconciling: %v", err)
		}
	}

	h.Create(t, withTTL(wrappers.TaskRun("", "reused", "t").Obj(), 0))
	old := finish("reused")
	if err := env.Client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	h.Create(t, withTTL(wrappers.TaskRun("", "reused", "t").Obj(), 0))
	reconcile(old)
	if run := h.TaskRun(t, "reused"); run.DeletionTimestamp != nil || run.UID == old.UID {
		t.Errorf("a stale read of a deleted run deleted the new run of its name (UID %s, deletionTimestamp %v)", run.UID, run.DeletionTimestamp)
	}

	h.Create(t, withTTL(wrappers.TaskRun("", "relabelled", "t").Obj(), 0))
	read := finish("relabelled")
	h.UpdateTaskRun(t, "relabelled", func(r *v1.TaskRun) { r.Labels = map[string]string{"keep": "me"} })
	reconcile(read)
	if run := h.TaskRun(t, "relabelled"); run.DeletionTimestamp != nil {
		t.Error("a run changed since it was read was deleted")
	}
	reconcile(h.TaskRun(t, "relabelled"))
	h.waitForDeletion(t, "relabelled")
}
