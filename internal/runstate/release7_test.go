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
		"a run of release 6's fields":    {spec: byRef, task: task(v1.TaskSpec{Steps: steps()})},
		"its Task not there":             {spec: byRef},
		"an empty sidecar list":          {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{}})},
		"an empty sidecar status list":   {spec: byRef, status: v1.TaskRunStatus{Sidecars: []v1.SidecarState{}}},
		"a step's securityContext":       {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.SecurityContext = &corev1.SecurityContext{} })}), want: `Task "build" spec.steps[1].securityContext`},
		"a step's imagePullPolicy":       {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.ImagePullPolicy = v1.PullNever })}), want: `Task "build" spec.steps[1].imagePullPolicy`},
		"a step's timeout: it runs":      {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.Timeout = v1.NewDuration(time.Minute) })})},
		"a stepTemplate":                 {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), StepTemplate: &v1.StepTemplate{}}), want: `Task "build" spec.stepTemplate`},
		"sidecars":                       {spec: byRef, task: task(v1.TaskSpec{Steps: steps(), Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres"}}}), want: `Task "build" spec.sidecars`},
		"the first of several, in order": {spec: byRef, task: task(v1.TaskSpec{Steps: steps(func(s *v1.Step) { s.ImagePullPolicy = v1.PullNever }), StepTemplate: &v1.StepTemplate{}}), want: `Task "build" spec.steps[1].imagePullPolicy`},
		"an inline taskSpec": {
			spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: steps()}}, want: "spec.taskSpec"},
		"a pinned taskSpec, before its Task's fields": {
			spec: byRef, status: v1.TaskRunStatus{TaskSpec: &v1.TaskSpec{Steps: steps()}},
			task: task(v1.TaskSpec{Steps: steps(), StepTemplate: &v1.StepTemplate{}}), want: "status.taskSpec"},
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
		"spec.taskSpec.steps[0].securityContext", "spec.taskSpec.steps[0].imagePullPolicy",
		"spec.taskSpec.stepTemplate", "spec.taskSpec.sidecars",
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
