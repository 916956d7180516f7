package stashguard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/config/crd"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestRelease7FieldsAreRefusedInEveryVersion: what only a later release
// runs, a run's inline and pinned specs' sidecars included, is
// refused whichever version writes it, v1 as its fields and either spoke in
// its conversion annotation, naming the field and release 7; an object that
// held it already (release 7's, after a rollback) still takes writes that
// keep it as it is, or drop it.
func TestRelease7FieldsAreRefusedInEveryVersion(t *testing.T) {
	ctx := context.Background()
	taskRules, err := loadHubRules(crd.TasksFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	runRules, err := loadHubRules(crd.TaskRunsFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	tasks, runs := newTaskGuard(taskRules), newTaskRunGuard(runRules)

	steps := []v1.Step{{Name: "a", Image: "alpine", Script: "true"}}
	plainTask := &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns", Labels: map[string]string{"x": "y"}}, Spec: v1.TaskSpec{Steps: steps}}
	sidecarTask := plainTask.DeepCopy()
	sidecarTask.Spec.Sidecars = []v1.Sidecar{{Name: "db", Image: "postgres:17"}}
	timeoutTask := plainTask.DeepCopy()
	timeoutTask.Spec.Steps[0].Timeout = v1.NewDuration(0)
	plainRun := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"}}}
	inlineRun := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{Steps: steps}}}
	pinnedRun := plainRun.DeepCopy()
	pinnedRun.Status.TaskSpec = &v1.TaskSpec{Steps: steps}
	sidecarsRun := plainRun.DeepCopy()
	sidecarsRun.Status.Sidecars = []v1.SidecarState{{Name: "db"}}
	readySidecarsRun := plainRun.DeepCopy()
	readySidecarsRun.Status.Sidecars = []v1.SidecarState{{Name: "db", Ready: ptr.To(true)}}
	otherSidecarTask := sidecarTask.DeepCopy()
	otherSidecarTask.Spec.Sidecars[0].Image = "postgres:18"
	bothTask := sidecarTask.DeepCopy()
	bothTask.Spec.Steps[0].Timeout = v1.NewDuration(0)
	inlineTimeoutRun := inlineRun.DeepCopy()
	inlineTimeoutRun.Spec.TaskSpec.Steps[0].Timeout = v1.NewDuration(time.Minute)
	inlineSidecarRun := inlineRun.DeepCopy()
	inlineSidecarRun.Spec.TaskSpec.Sidecars = sidecarTask.Spec.Sidecars
	pinnedSidecarRun := plainRun.DeepCopy()
	pinnedSidecarRun.Status.TaskSpec = sidecarTask.Spec.DeepCopy()
	editedSidecarTask := sidecarTask.DeepCopy()
	editedSidecarTask.Spec.Steps[0].Script = "echo edited"
	runsTask := plainTask.DeepCopy()
	runsTask.Spec.StepTemplate = &v1.StepTemplate{Env: []corev1.EnvVar{{Name: "GOFLAGS", Value: "-mod=mod"}}, ImagePullPolicy: v1.PullIfNotPresent}
	runsTask.Spec.Steps[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
	runsTask.Spec.Steps[0].ImagePullPolicy = v1.PullAlways
	inlineRunsRun := inlineRun.DeepCopy()
	inlineRunsRun.Spec.TaskSpec = &runsTask.Spec

	tests := map[string]struct {
		guard       admission.Handler
		kind        string
		subresource string
		obj, old    runtime.Object // v1 objects, written in version
		version     string
		want        string // the field refused; "" allowed
	}{
		"a v1 Task":                                              {guard: tasks, kind: "Task", version: "v1", obj: plainTask},
		"a v1 Task with sidecars":                                {guard: tasks, kind: "Task", version: "v1", obj: sidecarTask, want: "spec.sidecars"},
		"a v1beta1 Task with sidecars":                           {guard: tasks, kind: "Task", version: "v1beta1", obj: sidecarTask, want: "spec.sidecars"},
		"a v1alpha1 Task with a step timeout":                    {guard: tasks, kind: "Task", version: "v1alpha1", obj: timeoutTask},
		"a v1 Task with a step timeout":                          {guard: tasks, kind: "Task", version: "v1", obj: timeoutTask},
		"a v1alpha1 Task that held sidecars":                     {guard: tasks, kind: "Task", version: "v1alpha1", obj: sidecarTask, old: sidecarTask},
		"a v1 Task gaining sidecars":                             {guard: tasks, kind: "Task", version: "v1", obj: sidecarTask, old: plainTask, want: "spec.sidecars"},
		"a v1 Task trading a step timeout for sidecars":          {guard: tasks, kind: "Task", version: "v1", obj: sidecarTask, old: timeoutTask, want: "spec.sidecars"},
		"a v1 Task changing its sidecars":                        {guard: tasks, kind: "Task", version: "v1", obj: otherSidecarTask, old: sidecarTask, want: "spec.sidecars"},
		"a v1 Task gaining a step timeout":                       {guard: tasks, kind: "Task", version: "v1", obj: bothTask, old: sidecarTask},
		"a v1beta1 Task keeping its sidecars, its script edited": {guard: tasks, kind: "Task", version: "v1beta1", obj: editedSidecarTask, old: sidecarTask},
		"a v1 Task keeping a step timeout":                       {guard: tasks, kind: "Task", version: "v1", obj: timeoutTask, old: timeoutTask},
		"a v1alpha1 Task keeping a step timeout":                 {guard: tasks, kind: "Task", version: "v1alpha1", obj: timeoutTask, old: timeoutTask},
		"a v1 Task dropping its sidecars":                        {guard: tasks, kind: "Task", version: "v1", obj: plainTask, old: sidecarTask},
		"a v1 Task with a stepTemplate, a step's securityContext and pull policy, which this release runs": {
			guard: tasks, kind: "Task", version: "v1", obj: runsTask},
		"a v1alpha1 Task gaining what this release runs": {guard: tasks, kind: "Task", version: "v1alpha1", obj: runsTask, old: plainTask},
		"a v1beta1 Task gaining what this release runs":  {guard: tasks, kind: "Task", version: "v1beta1", obj: runsTask, old: plainTask},
		"a v1 run whose taskSpec has only what this release runs": {
			guard: runs, kind: "TaskRun", version: "v1", obj: inlineRunsRun},
		"a v1 run":                                   {guard: runs, kind: "TaskRun", version: "v1", obj: plainRun},
		"a v1 run with a taskSpec":                   {guard: runs, kind: "TaskRun", version: "v1", obj: inlineRun},
		"a v1beta1 run with a taskSpec":              {guard: runs, kind: "TaskRun", version: "v1beta1", obj: inlineRun},
		"a v1alpha1 run with a taskSpec":             {guard: runs, kind: "TaskRun", version: "v1alpha1", obj: inlineRun},
		"a v1 run whose taskSpec has sidecars":       {guard: runs, kind: "TaskRun", version: "v1", obj: inlineSidecarRun, want: "spec.taskSpec.sidecars"},
		"a v1beta1 run whose taskSpec has sidecars":  {guard: runs, kind: "TaskRun", version: "v1beta1", obj: inlineSidecarRun, want: "spec.taskSpec.sidecars"},
		"a v1alpha1 run whose taskSpec has sidecars": {guard: runs, kind: "TaskRun", version: "v1alpha1", obj: inlineSidecarRun, want: "spec.taskSpec.sidecars"},
		"a v1 status write pinning a spec": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: pinnedRun, old: plainRun},
		"a v1 status write pinning a spec with sidecars": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: pinnedSidecarRun, old: plainRun, want: "status.taskSpec.sidecars"},
		"a v1 status write of sidecars": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: sidecarsRun, old: plainRun, want: "status.sidecars"},
		"a v1 status write of a pinned run": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: pinnedRun, old: pinnedRun},
		"a v1 status write changing sidecars' states": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: readySidecarsRun, old: sidecarsRun, want: "status.sidecars"},
		"a v1 status write dropping sidecars' states": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: plainRun, old: sidecarsRun},
		"a v1 status write of a run whose taskSpec has a step timeout": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: inlineTimeoutRun, old: inlineTimeoutRun},
		"a v1beta1 write of a run that gives a taskSpec": {guard: runs, kind: "TaskRun", version: "v1beta1",
			obj: inlineRun, old: inlineRun},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			op := admissionv1.Create
			if tc.old != nil {
				op = admissionv1.Update
			}
			kind := metav1.GroupVersionKind{Group: "minitask.dev", Version: tc.version, Kind: tc.kind}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "1", Kind: kind, RequestKind: &kind, Name: "r", Namespace: "ns", Operation: op, SubResource: tc.subresource,
				Object: runtime.RawExtension{Raw: inVersion(t, ctx, tc.obj, tc.version)},
			}}
			if tc.old != nil {
				req.OldObject = runtime.RawExtension{Raw: inVersion(t, ctx, tc.old, tc.version)}
			}
			resp := tc.guard.Handle(ctx, req)
			if tc.want == "" {
				if !resp.Allowed {
					t.Fatalf("refused: %v", resp.Result)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("allowed; want %s refused", tc.want)
			}
			if msg := resp.Result.Message; !strings.Contains(msg, tc.want+": Forbidden: needs minitask release 7") {
				t.Errorf("message %q does not refuse %s for release 7", msg, tc.want)
			}
		})
	}
}

// inVersion is obj, a v1 Task or TaskRun, as JSON of version, converted as
// the API server's conversion does.
func inVersion(t *testing.T, ctx context.Context, obj runtime.Object, version string) []byte {
	t.Helper()
	var out any = obj
	var err error
	switch o := obj.(type) {
	case *v1.Task:
		switch version {
		case "v1beta1":
			spoke := &v1beta1.Task{}
			err, out = conversion.ConvertBetaTaskFromHub(ctx, o, spoke), spoke
		case "v1alpha1":
			spoke := &v1alpha1.Task{}
			err, out = conversion.ConvertTaskFromHub(ctx, o, spoke), spoke
		}
	case *v1.TaskRun:
		switch version {
		case "v1beta1":
			spoke := &v1beta1.TaskRun{}
			err, out = conversion.ConvertBetaTaskRunFromHub(ctx, o, spoke), spoke
		case "v1alpha1":
			spoke := &v1alpha1.TaskRun{}
			err, out = conversion.ConvertTaskRunFromHub(ctx, o, spoke), spoke
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRelease7FieldsAreRunstates holds the fields the guard compares to
// the paths runstate names, which say what needs release 7.
func TestRelease7FieldsAreRunstates(t *testing.T) {
	spec := &v1.TaskSpec{
		Steps: []v1.Step{
			{Name: "a", Image: "i"},
			{Name: "b", Image: "i", SecurityContext: &corev1.SecurityContext{}, ImagePullPolicy: v1.PullNever, Timeout: v1.NewDuration(0)},
			{Name: "c", Image: "i", ImagePullPolicy: v1.PullAlways},
		},
		StepTemplate: &v1.StepTemplate{},
		Sidecars:     []v1.Sidecar{{Name: "db", Image: "postgres"}},
	}
	run := &v1.TaskRun{Spec: v1.TaskRunSpec{TaskSpec: spec}, Status: v1.TaskRunStatus{TaskSpec: spec, Sidecars: []v1.SidecarState{{Name: "db"}}}}
	for _, c := range []struct {
		fields []release7Field
		want   []*field.Path
	}{
		{taskRelease7Fields(spec), runstate.TaskSpecRelease7Fields(spec, field.NewPath("spec"))},
		{taskRunRelease7Fields(run), runstate.TaskRunRelease7Fields(run)},
	} {
		var got, want []string
		for _, f := range c.fields {
			got = append(got, f.path.String())
		}
		for _, p := range c.want {
			want = append(want, p.String())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the guard's fields differ from runstate's (-runstate +guard):\n%s", diff)
		}
	}
}
