package stashguard

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/config/crd"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestSidecarsPassInEveryVersion: this release runs sidecars, so the guard,
// which refused them while a release kept them without running them, lets
// them through whichever version writes them, v1 as its fields and either
// spoke in its conversion annotation: in a Task, in a run's inline and
// pinned specs, and in status.sidecars.
func TestSidecarsPassInEveryVersion(t *testing.T) {
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
	plainTask := &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"}, Spec: v1.TaskSpec{Steps: steps}}
	sidecarTask := plainTask.DeepCopy()
	sidecarTask.Spec.Sidecars = []v1.Sidecar{{Name: "db", Image: "postgres:17"}}
	otherSidecarTask := sidecarTask.DeepCopy()
	otherSidecarTask.Spec.Sidecars[0].Image = "postgres:18"
	plainRun := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "t"}}}
	inlineSidecarRun := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1.TaskRunSpec{TaskSpec: sidecarTask.Spec.DeepCopy()}}
	pinnedSidecarRun := plainRun.DeepCopy()
	pinnedSidecarRun.Status.TaskSpec = sidecarTask.Spec.DeepCopy()
	sidecarsRun := pinnedSidecarRun.DeepCopy()
	sidecarsRun.Status.Sidecars = []v1.SidecarState{{Name: "db", State: v1.StepRunning, Ready: ptr.To(true)}}

	tests := map[string]struct {
		guard       admission.Handler
		kind        string
		subresource string
		obj, old    runtime.Object // v1 objects, written in version
		version     string
	}{
		"a v1 Task with sidecars":                    {guard: tasks, kind: "Task", version: "v1", obj: sidecarTask},
		"a v1beta1 Task with sidecars":               {guard: tasks, kind: "Task", version: "v1beta1", obj: sidecarTask},
		"a v1alpha1 Task with sidecars":              {guard: tasks, kind: "Task", version: "v1alpha1", obj: sidecarTask},
		"a v1 Task gaining sidecars":                 {guard: tasks, kind: "Task", version: "v1", obj: sidecarTask, old: plainTask},
		"a v1beta1 Task changing its sidecars":       {guard: tasks, kind: "Task", version: "v1beta1", obj: otherSidecarTask, old: sidecarTask},
		"a v1 run whose taskSpec has sidecars":       {guard: runs, kind: "TaskRun", version: "v1", obj: inlineSidecarRun},
		"a v1alpha1 run whose taskSpec has sidecars": {guard: runs, kind: "TaskRun", version: "v1alpha1", obj: inlineSidecarRun},
		"a v1 status write pinning a spec with sidecars": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: pinnedSidecarRun, old: plainRun},
		"a v1 status write of sidecars' states": {guard: runs, kind: "TaskRun", version: "v1", subresource: "status",
			obj: sidecarsRun, old: pinnedSidecarRun},
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
			if resp := tc.guard.Handle(ctx, req); !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
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
