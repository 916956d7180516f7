package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPinFromThePodsTaskVersion: the reconcile that creates a run's first
// Pod writes no status, and the next one pins the spec of the Task version
// the Pod names, whatever happened to the Task in between: kept, edited,
// deleted, or deleted and made anew under its name. A Pod that names no
// version (release 6's), or one that never was, leaves the run unpinned,
// and the run goes on.
func TestPinFromThePodsTaskVersion(t *testing.T) {
	ctx := context.Background()
	edit := func(t *testing.T, _ *harness, task *v1.Task) {
		task.Spec.Steps[0].Script = "echo edited"
		if err := env.Client.Update(ctx, task); err != nil {
			t.Fatalf("editing Task %s: %v", task.Name, err)
		}
	}
	remove := func(t *testing.T, _ *harness, task *v1.Task) {
		if err := env.Client.Delete(ctx, task); err != nil {
			t.Fatalf("deleting Task %s: %v", task.Name, err)
		}
	}
	annotatePod := func(value *string) func(*testing.T, *harness, *corev1.Pod) {
		return func(t *testing.T, _ *harness, pod *corev1.Pod) {
			patch := client.MergeFrom(pod.DeepCopy())
			if value == nil {
				delete(pod.Annotations, runstate.AnnotationTaskVersion)
			} else {
				pod.Annotations[runstate.AnnotationTaskVersion] = *value
			}
			if err := env.Client.Patch(ctx, pod, patch); err != nil {
				t.Fatalf("annotating Pod %s: %v", pod.Name, err)
			}
		}
	}
	tests := map[string]struct {
		task     func(*testing.T, *harness, *v1.Task)
		pod      func(*testing.T, *harness, *corev1.Pod)
		unpinned bool
	}{
		"the Task kept":    {},
		"the Task edited":  {task: edit},
		"the Task deleted": {task: remove},
		"the Task deleted and made anew, edited": {task: func(t *testing.T, h *harness, task *v1.Task) {
			remove(t, h, task)
			anew := twoSteps(task.Name)
			anew.Spec.Steps[0].Script = "echo anew"
			h.Create(t, anew)
		}},
		"a Pod naming no version (release 6's)": {pod: annotatePod(nil), unpinned: true},
		"a version that never was, the Task edited": {
			task: edit, pod: func(t *testing.T, h *harness, pod *corev1.Pod) {
				version, _ := runstate.PodTaskVersion(pod)
				version.ResourceVersion = "1"
				annotatePod(new(version.String()))(t, h, pod)
			},
			unpinned: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			task := twoSteps("t")
			h.Create(t, task, wrappers.TaskRun("", "run", "t").Obj())
			want := task.Spec.DeepCopy()
			r := directReconciler(t, env.Client)
			reconcile := func() {
				t.Helper()
				if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: h.Key("run")}); err != nil {
					t.Fatalf("reconciling: %v", err)
				}
			}

			reconcile()
			pods := h.pods(t, "run")
			if len(pods) != 1 {
				t.Fatalf("the first reconcile made %d Pods, want 1", len(pods))
			}
			if version, ok := runstate.PodTaskVersion(&pods[0]); !ok || !version.Of(task) {
				t.Errorf("the Pod names Task version %q, want the Task's own (%s/%d)",
					pods[0].Annotations[runstate.AnnotationTaskVersion], task.UID, task.Generation)
			}
			if run := h.TaskRun(t, "run"); run.Status.StartTime != nil || run.Status.TaskSpec != nil {
				t.Fatalf("the reconcile that created the Pod wrote a status: %+v", run.Status)
			}
			if tc.task != nil {
				tc.task(t, h, task)
			}
			if tc.pod != nil {
				tc.pod(t, h, &pods[0])
			}

			reconcile()
			run := h.TaskRun(t, "run")
			if run.Status.StartTime == nil || run.Status.PodName != pods[0].Name {
				t.Fatalf("the next reconcile did not record the run's start and Pod: %+v", run.Status)
			}
			if tc.unpinned {
				want = nil
			}
			if diff := cmp.Diff(want, run.Status.TaskSpec); diff != "" {
				t.Errorf("status.taskSpec (-want +got):\n%s", diff)
			}
		})
	}
}

// directReconciler is the TaskRun controller reading and writing through
// c (the API server itself, or a client wrapping it), set up as main.go
// sets it up, to be reconciled by hand.
func directReconciler(t *testing.T, c client.Client) *controllers.TaskRunReconciler {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	r := &controllers.TaskRunReconciler{Client: c, APIReader: env.Client, Scheme: env.Scheme,
		Recorder: events.NewFakeRecorder(100), DefaultTimeout: time.Hour}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	return r
}
