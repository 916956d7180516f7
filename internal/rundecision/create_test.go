package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodInTheWay checks the outcome of a run whose Pod name is taken, and
// that a run waiting for an earlier run's Pod looks again, sooner when it has
// just been created, no more than 30s apart later: no event tells it that an
// ended Pod has gone.
func TestPodInTheWay(t *testing.T) {
	created := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	run := wrappers.TaskRun("ns", "run", "t").UID("new").Obj()
	run.CreationTimestamp = metav1.NewTime(created)
	earlier := wrappers.TaskRun("ns", "run", "t").UID("old").Obj()
	earlier.APIVersion, earlier.Kind = v1.GroupVersion.String(), "TaskRun"
	other := wrappers.TaskRun("ns", "another", "t").UID("other").Obj()
	other.APIVersion, other.Kind = v1.GroupVersion.String(), "TaskRun"
	podOf := func(owner *v1.TaskRun) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-pod"}}
		if owner != nil {
			pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1.GroupVersion.WithKind("TaskRun"))}
		}
		return pod
	}
	ofAnotherGroup := podOf(earlier)
	ofAnotherGroup.OwnerReferences[0].APIVersion = "tekton.dev/v1"
	waiting := &Outcome{metav1.ConditionUnknown, v1.ReasonPending, `waiting for Pod "run-pod" of an earlier TaskRun named "run" to be deleted`}
	notOurs := &Outcome{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "run-pod" already exists and is not controlled by this TaskRun`}
	type want struct {
		Outcome *Outcome
		// RecheckIn is how soon the run looks again; 0 for not sooner
		// than its deadline.
		RecheckIn time.Duration
	}
	tests := map[string]struct {
		pod    *corev1.Pod
		waited time.Duration
		want   want
	}{
		"earlier run's, just created":       {podOf(earlier), 0, want{waiting, time.Second}},
		"earlier run's, after 10s":          {podOf(earlier), 10 * time.Second, want{waiting, 5 * time.Second}},
		"earlier run's, after an hour":      {podOf(earlier), time.Hour, want{waiting, 30 * time.Second}},
		"earlier run's, clock behind":       {podOf(earlier), -time.Minute, want{waiting, time.Second}},
		"another run's":                     {podOf(other), time.Minute, want{notOurs, 0}},
		"nobody's":                          {podOf(nil), time.Minute, want{notOurs, 0}},
		"a TaskRun's of another API's name": {ofAnotherGroup, time.Minute, want{notOurs, 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := NewAttempt(run.DeepCopy(), created.Add(tc.waited), 0)
			a.OtherPod = tc.pod
			got := want{a.PodInTheWay(), a.RecheckIn}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodInTheWay() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTaskFound: a run waits for a Task that does not exist, ends for params
// that do not fit it, and otherwise gets its params' values.
func TestTaskFound(t *testing.T) {
	task := func() *wrappers.TaskWrapper { return wrappers.Task("ns", "t").Step("a", "alpine", "echo $(params.x)") }
	type want struct {
		Values  params.Values
		Outcome *Outcome
		// Task is the Task the Pod is built from.
		Task *v1.Task
	}
	named := func(name string, spec v1.TaskSpec) *v1.Task {
		return &v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: spec}
	}
	withSidecar := func(t *v1.Task) *v1.Task {
		t.Spec.Sidecars = []v1.Sidecar{{Name: "db", Image: "postgres:17"}}
		return t
	}
	tests := map[string]struct {
		task *v1.Task
		run  *v1.TaskRun
		want want
	}{
		"no Task": {
			task: nil, run: wrappers.TaskRun("ns", "run", "t").Obj(),
			want: want{Outcome: Unknown(v1.ReasonWaitingForTask, `waiting for Task "t", which does not exist`)},
		},
		"a param without a value": {
			task: task().Param("x").Param("y").Obj(), run: wrappers.TaskRun("ns", "run", "t").Obj(),
			want: want{Outcome: Failed(v1.ReasonInvalidParams, "missing values for params with no default: x, y")},
		},
		"a value of another type": {
			task: task().Params(v1.ParamSpec{Name: "x", Type: v1.ParamTypeArray}).Obj(),
			run:  wrappers.TaskRun("ns", "run", "t").Param("x", "one").Obj(),
			want: want{Outcome: Failed(v1.ReasonInvalidParams, `param "x": its value is a string, but the param is an array`)},
		},
		"a value given": {
			task: task().Param("x").Obj(), run: wrappers.TaskRun("ns", "run", "t").Param("x", "one").Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "one"}}, Task: task().Param("x").Obj()},
		},
		"a default": {
			task: task().ParamDefault("x", "two").Obj(), run: wrappers.TaskRun("ns", "run", "t").Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "two"}}, Task: task().ParamDefault("x", "two").Obj()},
		},
		"a Task with a sidecar, which this release runs": {
			task: withSidecar(task().ParamDefault("x", "two").Obj()),
			run:  wrappers.TaskRun("ns", "run", "t").Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "two"}}, Task: withSidecar(task().ParamDefault("x", "two").Obj())},
		},
		"a run that gives its Task inline": {
			task: nil, run: wrappers.TaskRun("ns", "run", "").Inline(task().ParamDefault("x", "two").Obj().Spec).Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "two"}},
				Task: named("run", task().ParamDefault("x", "two").Obj().Spec)},
		},
		"an inline spec's params": {
			task: nil, run: wrappers.TaskRun("ns", "run", "").Inline(task().Param("x").Obj().Spec).Obj(),
			want: want{Outcome: Failed(v1.ReasonInvalidParams, "missing values for params with no default: x")},
		},
		"an inline spec with a sidecar, which this release runs": {
			task: nil, run: wrappers.TaskRun("ns", "run", "").Inline(withSidecar(task().ParamDefault("x", "two").Obj()).Spec).Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "two"}},
				Task: named("run", withSidecar(task().ParamDefault("x", "two").Obj()).Spec)},
		},
		"a pinned spec, its Task edited since": {
			task: task().Param("x").Param("y").Obj(),
			run:  wrappers.TaskRun("ns", "run", "t").Pinned(task().ParamDefault("x", "pinned").Obj().Spec).Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "pinned"}},
				Task: named("t", task().ParamDefault("x", "pinned").Obj().Spec)},
		},
		"a pinned spec, its Task deleted since": {
			task: nil, run: wrappers.TaskRun("ns", "run", "t").Pinned(task().ParamDefault("x", "pinned").Obj().Spec).Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "pinned"}},
				Task: named("t", task().ParamDefault("x", "pinned").Obj().Spec)},
		},
		"a pinned spec, its Task given a sidecar since": {
			task: withSidecar(task().Obj()),
			run:  wrappers.TaskRun("ns", "run", "t").Pinned(task().ParamDefault("x", "pinned").Obj().Spec).Obj(),
			want: want{Values: params.Values{Params: map[string]string{"x": "pinned"}},
				Task: named("t", task().ParamDefault("x", "pinned").Obj().Spec)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(tc.run, nil, testTime)
			var got want
			got.Values, got.Outcome = a.TaskFound(tc.task)
			got.Task = a.Task
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TaskFound() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
