package rundecision

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPinTaskSpec: the first status write that records a Pod pins the spec
// the Pod was built from, an inline run's whichever write that is; a pin
// is never changed; and a run whose Pod this reconcile did not build from
// its Task (release 6's, say) waits for its next Pod to be pinned.
func TestPinTaskSpec(t *testing.T) {
	task := wrappers.Task("ns", "t").Step("a", "alpine", "true").Obj()
	edited := wrappers.Task("ns", "t").Step("a", "alpine", "false").Obj()
	byRef := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t") }
	inline := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "").Inline(task.Spec) }
	tests := map[string]struct {
		run     *v1.TaskRun
		found   *v1.Task // the Task TaskFound is given, nil: not called
		pod     bool
		created bool
		want    *v1.TaskSpec
	}{
		"its Task's, at its first Pod":        {run: byRef().Obj(), found: task, pod: true, created: true, want: &task.Spec},
		"no Pod created: nothing":             {run: byRef().Obj(), found: task},
		"a Pod found, not built now: nothing": {run: byRef().Obj(), pod: true},
		"a Pod already there when created":    {run: byRef().Obj(), found: task, pod: true},
		"inline, at its first Pod":            {run: inline().Obj(), found: nil, pod: true, created: true, want: &task.Spec},
		"inline, the Pod's own reconcile":     {run: inline().Obj(), pod: true, want: &task.Spec},
		"inline, no Pod: nothing":             {run: inline().Obj()},
		"pinned, its Task edited: kept":       {run: byRef().Pinned(task.Spec).Obj(), found: edited, pod: true, created: true, want: &task.Spec},
		"pinned, a retry's Pod, Task deleted": {run: withAttempts(byRef().Pinned(task.Spec).Obj(), "run-pod"), found: nil, pod: true, created: true, want: &task.Spec},
		"release 6's run, at its next Pod":    {run: withAttempts(byRef().Obj(), "run-pod"), found: edited, pod: true, created: true, want: &edited.Spec},
		"a pin that is not the Task's, kept":  {run: byRef().Pinned(edited.Spec).Obj(), pod: true, want: &edited.Spec},
		"an inline run's pin, kept as it is":  {run: inline().Pinned(edited.Spec).Obj(), pod: true, want: &edited.Spec},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(tc.run, nil, testTime)
			if tc.found != nil || tc.created {
				if _, o := a.TaskFound(tc.found); o != nil {
					t.Fatalf("TaskFound() = %+v, want no outcome", o)
				}
			}
			if tc.pod {
				a.Pod = threeStepPod()
			}
			a.CreatedPod = tc.created
			a.Outcome = Unknown(v1.ReasonPending, "p")
			a.ApplyStatus()
			if diff := cmp.Diff(tc.want, a.Run.Status.TaskSpec); diff != "" {
				t.Errorf("status.taskSpec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPinFromPod: a run whose first Pod's reconcile left the status to the
// next one is pinned, in that next one, to the Task its Pod names; nothing
// else asks for a Task to be read, and a pin is never replaced.
func TestPinFromPod(t *testing.T) {
	task := wrappers.Task("ns", "t").Step("a", "alpine", "true").Obj()
	edited := wrappers.Task("ns", "t").Step("a", "alpine", "false").Obj()
	byRef := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t") }
	named := runstate.TaskVersion{UID: "u", Generation: 2, ResourceVersion: "17"}
	tests := map[string]struct {
		run *v1.TaskRun
		// podNames is the Task version the Pod names; "" for none, "-" for no Pod.
		podNames string
		created  bool
		want     *runstate.TaskVersion
		wantPin  *v1.TaskSpec
	}{
		"its Pod names its Task":                 {run: byRef().Obj(), podNames: named.String(), want: &named, wantPin: &task.Spec},
		"its Pod names none (release 6's)":       {run: byRef().Obj()},
		"its Pod names a malformed one":          {run: byRef().Obj(), podNames: "u/two/17"},
		"no Pod":                                 {run: byRef().Obj(), podNames: "-"},
		"the Pod created now: pinned at writing": {run: byRef().Obj(), podNames: named.String(), created: true},
		"pinned already: kept":                   {run: byRef().Pinned(edited.Spec).Obj(), podNames: named.String(), wantPin: &edited.Spec},
		"inline: its own spec":                   {run: wrappers.TaskRun("ns", "run", "").Inline(edited.Spec).Obj(), podNames: named.String(), wantPin: &edited.Spec},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(tc.run, threeStepPod(), testTime)
			switch tc.podNames {
			case "-":
				a.Pod = nil
			case "":
			default:
				a.Pod.Annotations = map[string]string{runstate.AnnotationTaskVersion: tc.podNames}
			}
			a.CreatedPod = tc.created
			got, ok := a.PodTaskToPin()
			if diff := cmp.Diff(tc.want != nil, ok); diff != "" {
				t.Fatalf("PodTaskToPin() asks (-want +got):\n%s", diff)
			}
			if ok {
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("PodTaskToPin() mismatch (-want +got):\n%s", diff)
				}
				a.PinPodTask(task)
			}
			a.Outcome = Unknown(v1.ReasonPending, "p")
			a.ApplyStatus()
			if diff := cmp.Diff(tc.wantPin, a.Run.Status.TaskSpec); diff != "" {
				t.Errorf("status.taskSpec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
