package runstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestTaskToRun: a pinned spec wins over everything, an inline one over
// the Task, and a run with neither runs its Task as read.
func TestTaskToRun(t *testing.T) {
	spec := func(image string) *v1.TaskSpec { return &v1.TaskSpec{Steps: []v1.Step{{Name: "a", Image: image}}} }
	task := &v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "build"}, Spec: *spec("task")}
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "run"}
	byRef := v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "build"}}
	inline := v1.TaskRunSpec{TaskSpec: spec("inline")}
	named := func(name, image string) *v1.Task {
		return &v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: *spec(image)}
	}
	tests := map[string]struct {
		spec       v1.TaskRunSpec
		pinned     *v1.TaskSpec
		task       *v1.Task
		want       *v1.Task
		wantSource TaskSpecSource
		wantNeeds  bool
	}{
		"its Task":                    {spec: byRef, task: task, want: task, wantSource: TaskSpecTask, wantNeeds: true},
		"its Task not there":          {spec: byRef, wantSource: TaskSpecTask, wantNeeds: true},
		"pinned, its Task edited":     {spec: byRef, pinned: spec("pinned"), task: task, want: named("build", "pinned"), wantSource: TaskSpecPinned},
		"pinned, its Task deleted":    {spec: byRef, pinned: spec("pinned"), want: named("build", "pinned"), wantSource: TaskSpecPinned},
		"inline, named after the run": {spec: inline, want: named("run", "inline"), wantSource: TaskSpecInline},
		"inline and pinned: the pin":  {spec: inline, pinned: spec("pinned"), want: named("run", "pinned"), wantSource: TaskSpecPinned},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{ObjectMeta: meta, Spec: tc.spec, Status: v1.TaskRunStatus{TaskSpec: tc.pinned}}
			if diff := cmp.Diff(tc.want, TaskToRun(run, tc.task)); diff != "" {
				t.Errorf("TaskToRun() mismatch (-want +got):\n%s", diff)
			}
			if got := SpecSource(run); got != tc.wantSource {
				t.Errorf("SpecSource() = %q, want %q", got, tc.wantSource)
			}
			if got := NeedsTask(run); got != tc.wantNeeds {
				t.Errorf("NeedsTask() = %t, want %t", got, tc.wantNeeds)
			}
		})
	}
}
