package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runcache"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// startCache starts a manager with the controller's cache options and no
// controller, and returns its cache, for a test to read what it holds.
func (h *harness) startCache(t *testing.T) client.Reader {
	t.Helper()
	var mgr ctrl.Manager
	h.StartManager(t, func(m ctrl.Manager) error { mgr = m; return nil },
		func(o *ctrl.Options) { o.Cache = runcache.Options() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's cache did not start")
	}
	return mgr.GetCache()
}

// TestCacheHoldsThePodsOfRunsThatGoOn checks, against a real API server, that
// the cache holds minitask's Pods until they end, and no other: the field
// selector on status.phase is the API server's to apply, and a Pod that ends
// leaves the cache (the controller then reads it from the API server).
func TestCacheHoldsThePodsOfRunsThatGoOn(t *testing.T) {
	if env == nil {
		t.Skip("envtest")
	}
	h := newHarness(t)
	pod := func(name string, managed bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "step-a", Image: "alpine"}},
				Volumes: []corev1.Volume{{Name: "ws-source", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
		if managed {
			p.Labels = map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue}
		}
		return p
	}
	tests := map[string]struct {
		managed bool
		phase   corev1.PodPhase
		cached  bool
	}{
		"pending":       {true, corev1.PodPending, true},
		"running":       {true, corev1.PodRunning, true},
		"unknown":       {true, corev1.PodUnknown, true},
		"succeeded":     {true, corev1.PodSucceeded, false},
		"failed":        {true, corev1.PodFailed, false},
		"someone-elses": {false, corev1.PodRunning, false},
	}
	for name, tc := range tests {
		p := pod(name, tc.managed)
		h.Create(t, p)
		p.Status.Phase = tc.phase
		if err := h.Env.Client.Status().Update(context.Background(), p); err != nil {
			t.Fatalf("writing the phase of Pod %s: %v", name, err)
		}
	}
	cache := h.startCache(t)
	cached := func(name string) (bool, *corev1.Pod) {
		got := &corev1.Pod{}
		err := cache.Get(context.Background(), h.Key(name), got)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("reading Pod %s from the cache: %v", name, err)
		}
		return err == nil, got
	}
	for name, tc := range tests {
		testenv.Eventually(t, func() (bool, string) {
			got, pod := cached(name)
			if got && len(pod.Spec.Volumes) > 0 {
				t.Errorf("the cache holds Pod %s untrimmed: %v", name, pod.Spec.Volumes)
			}
			return got == tc.cached, cmp.Diff(tc.cached, got)
		}, "Pod %s (%s) in the cache (-want +got)", name, tc.phase)
	}

	running := &corev1.Pod{}
	if err := h.Env.Client.Get(context.Background(), h.Key("running"), running); err != nil {
		t.Fatal(err)
	}
	running.Status.Phase = corev1.PodSucceeded
	if err := h.Env.Client.Status().Update(context.Background(), running); err != nil {
		t.Fatalf("ending Pod running: %v", err)
	}
	testenv.Eventually(t, func() (bool, string) {
		got, _ := cached("running")
		return !got, "still cached"
	}, "the Pod that ended to leave the cache")
}

// TestCacheTrimsFinishedRuns checks that the cache keeps a finished run
// without what only running it needs, and a run that goes on whole.
func TestCacheTrimsFinishedRuns(t *testing.T) {
	if env == nil {
		t.Skip("envtest")
	}
	h := newHarness(t)
	run := func(name string) *v1.TaskRun {
		return wrappers.TaskRun(h.NS, name, "build").Param("revision", "v1").
			Workspace(v1.WorkspaceBinding{Name: "source", EmptyDir: &corev1.EmptyDirVolumeSource{}}).
			PodTemplate(v1.PodTemplate{NodeSelector: map[string]string{"pool": "builds"}}).Obj()
	}
	h.Create(t, run("going"), run("done"))
	now := metav1.Now()
	h.UpdateTaskRunStatus(t, "done", func(r *v1.TaskRun) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: string(v1.ReasonSucceeded), Message: "every step exited 0", LastTransitionTime: now}}
		r.Status.CompletionTime = &now
		r.Status.Steps = []v1.StepState{{Name: "build", State: v1.StepTerminated}}
	})
	cache := h.startCache(t)
	tests := map[string]struct {
		name string
		want func(stored *v1.TaskRun) *v1.TaskRun
	}{
		"going on: whole but managedFields": {"going", func(r *v1.TaskRun) *v1.TaskRun { return r }},
		"finished: no params, workspaces, Pod template or steps": {"done", func(r *v1.TaskRun) *v1.TaskRun {
			r.Spec.Params, r.Spec.Workspaces, r.Spec.PodTemplate, r.Status.Steps = nil, nil, nil, nil
			return r
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stored := h.TaskRun(t, tc.name)
			stored.ManagedFields = nil
			want := tc.want(stored)
			testenv.Eventually(t, func() (bool, string) {
				got := &v1.TaskRun{}
				if err := cache.Get(context.Background(), h.Key(tc.name), got); err != nil {
					return false, err.Error()
				}
				diff := cmp.Diff(want, got, cmpopts.IgnoreTypes(metav1.TypeMeta{}))
				return diff == "", diff
			}, "TaskRun %s in the cache (-want +got)", tc.name)
		})
	}
}
