package runstate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestNeedsRelease7(t *testing.T) {
	steps := func(changes ...func(*v1.Step)) []v1.Step {
		s := []v1.Step{{Name: "a", Image: "alpine"}, {Name: "b", Image: "alpine"}}
		for _, change := range changes {
			change(&s[1])
		}
		return s
	}
	task := func(spec v1.TaskSpec) *v1.Task {
		return &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "build"}, Spec: spec}
	}
	byRef := v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "build"}}
	tests := map[string]struct {
		spec   v1.TaskRunSpec
		status v1.TaskRunStatus
		task   *v1.Task
		want   string
	}{
		"a run of release 6's fields":   {spec: byRef, task: task(v1.TaskSpec{Steps: steps()})},
		"its Task not there":            {spec: byRef},
		"an empty sidecar list":         {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{}})},
		"an empty sidecar status list":  {spec: byRef, status: v1.TaskRunStatus{Sidecars: []v1.SidecarState{}}},
		"a step's securityContext, run": {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.SecurityContext = &corev1.SecurityContext{} })})},
		"a step's imagePullPolicy, run": {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.ImagePullPolicy = v1.PullNever })})},
		"a step's timeout, run":         {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.Timeout = v1.NewDuration(time.Minute) })})},
		"a stepTemplate, run":           {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), StepTemplate: &v1.StepTemplate{}})},
		"sidecars":                      {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres"}}}), want: `Task "build" spec.sidecars`},
		"sidecars beside fields this release runs": {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) {
			s.SecurityContext, s.ImagePullPolicy, s.Timeout = &corev1.SecurityContext{}, v1.PullAlways, v1.NewDuration(time.Minute)
		}), StepTemplate: &v1.StepTemplate{}, Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres"}}}), want: `Task "build" spec.sidecars`},
		"an inline taskSpec": {spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: steps()}}},
		"a pinned taskSpec":  {spec: byRef, status: v1.TaskRunStatus{TaskSpec: &v1.TaskSpec{Steps: steps()}}},
		"sidecars in an inline taskSpec": {
			spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres"}}}},
			want: "spec.taskSpec.sidecars"},
		"sidecars in a pinned taskSpec, before its Task's fields": {
			spec: byRef, status: v1.TaskRunStatus{TaskSpec: &v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres"}}}},
			task: task(v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{{Name: "web", Image: "nginx"}}}), want: "status.taskSpec.sidecars"},
		"sidecars' states": {
			spec: byRef, status: v1.TaskRunStatus{Sidecars: []v1.SidecarState{{Name: "db"}}}, want: "status.sidecars"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: tc.spec, Status: tc.status}
			field, needs := NeedsRelease7(run, tc.task)
			if diff := cmp.Diff(tc.want, field); diff != "" || needs != (tc.want != "") {
				t.Errorf("NeedsRelease7() = %q, %t; field mismatch (-want +got):\n%s", field, needs, diff)
			}
		})
	}
}

// TestTaskSpecRelease7FieldsListsEveryOne: of a spec that uses every
// release 7 field, the list names those this release keeps but does not run
// yet, and not those it runs (the stepTemplate, a step's securityContext
// and imagePullPolicy).
func TestTaskSpecRelease7FieldsListsEveryOne(t *testing.T) {
	spec := &v1.TaskSpec{
		Steps:        []v1.Step{{Name: "a", Image: "i", SecurityContext: &corev1.SecurityContext{}, ImagePullPolicy: v1.PullAlways, Timeout: v1.NewDuration(time.Second)}},
		StepTemplate: &v1.StepTemplate{},
		Sidecars:     []v1.Sidecar{{Name: "db", Image: "postgres"}},
	}
	var got []string
	for _, p := range TaskSpecRelease7Fields(spec, fieldPathSpec.Child("taskSpec")) {
		got = append(got, p.String())
	}
	want := []string{
		"spec.taskSpec.sidecars",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TaskSpecRelease7Fields() mismatch (-want +got):\n%s", diff)
	}
}

func TestRelease7Message(t *testing.T) {
	run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "lint-run"}}
	want := `TaskRun "lint-run" uses Task "build" spec.sidecars, which needs minitask release 7; waiting for a roll forward`
	if got := Release7Message(run, `Task "build" spec.sidecars`); got != want {
		t.Errorf("Release7Message() = %q, want %q", got, want)
	}
}
