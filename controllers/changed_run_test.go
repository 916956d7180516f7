package controllers_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestRunChangedSinceReadWaitsForItsEvent reconciles a new run from a stale
// read, as the cache gives one that another writer has just changed (release
// 6's storage migration rewrites every object when its manager first
// starts): no Pod is created, nothing is written, and the reconcile ends
// without an error, which controller-runtime would log as one and retry with
// backoff, for the change's watch event reconciles the run again. A read
// that is current then creates the Pod.
func TestRunChangedSinceReadWaitsForItsEvent(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.Create(t, twoSteps("t"), wrappers.TaskRun("", "rewritten", "t").Obj())
	stale := h.TaskRun(t, "rewritten")
	h.UpdateTaskRun(t, "rewritten", func(r *v1.TaskRun) { r.Labels = map[string]string{"rewritten": "yes"} })

	reconcile := func(c client.Client) error {
		t.Helper()
		_, err := directReconciler(t, c).Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
		return err
	}
	if err := reconcile(staleReader{Client: env.Client, run: stale}); err != nil {
		t.Errorf("reconciling a run changed since it was read: %v, want no error", err)
	}
	if pods := h.pods(t, "rewritten"); len(pods) != 0 {
		t.Errorf("a run changed since it was read got %d Pods, want none yet", len(pods))
	}
	if run := h.TaskRun(t, "rewritten"); len(run.Status.Conditions) != 0 {
		t.Errorf("a run changed since it was read got a status written: %+v", run.Status)
	}

	if err := reconcile(env.Client); err != nil {
		t.Fatalf("reconciling the run as it is: %v", err)
	}
	if pods := h.pods(t, "rewritten"); len(pods) != 1 || pods[0].Status.Phase == corev1.PodFailed {
		t.Errorf("the run read as it is got Pods %v, want its one", pods)
	}
}
