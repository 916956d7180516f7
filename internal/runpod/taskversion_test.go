package runpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestBuildNamesTheTaskVersion: the Pod of a run that runs its Task as
// read names that Task's version, which the run's next status write pins;
// a run with a pinned or an inline spec names none, even given a Task read
// from the API server, and neither does a Task with no version (one that
// runstate.TaskToRun made of a pinned or an inline spec).
func TestBuildNamesTheTaskVersion(t *testing.T) {
	task := wrappers.Task("ns", "t").Step("a", "alpine:3", "true").Obj()
	task.UID, task.Generation, task.ResourceVersion = "0b1c", 2, "4711"
	tests := map[string]struct {
		run  *v1.TaskRun
		task *v1.Task
		want string
	}{
		"its Task, as read":  {run: wrappers.TaskRun("ns", "run", "t").Obj(), task: task, want: "0b1c/2/4711"},
		"a Task unversioned": {run: wrappers.TaskRun("ns", "run", "t").Obj(), task: wrappers.Task("ns", "t").Step("a", "alpine:3", "true").Obj()},
		"pinned":             {run: wrappers.TaskRun("ns", "run", "t").Pinned(task.Spec).Obj(), task: task},
		"inline":             {run: wrappers.TaskRun("ns", "run", "").Inline(task.Spec).Obj(), task: task},
		"pinned, as run":     {run: wrappers.TaskRun("ns", "run", "t").Pinned(task.Spec).Obj(), task: runstate.TaskToRun(wrappers.TaskRun("ns", "run", "t").Pinned(task.Spec).Obj(), task)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod, err := Build(tc.run, tc.task, Inputs{Name: "run-pod"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pod.Annotations[runstate.AnnotationTaskVersion]); diff != "" {
				t.Errorf("the Pod's %s (-want +got):\n%s", runstate.AnnotationTaskVersion, diff)
			}
		})
	}
}
