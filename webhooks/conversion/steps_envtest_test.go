package conversion

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// testStepEditsThroughV1alpha1: through a real API server, a v1alpha1
// client that edits a step's script, reorders the steps and renames one
// keeps the additions of the steps it kept, by name, and drops those of
// the step it renamed.
func testStepEditsThroughV1alpha1(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	build := buildStepWithAdditions
	build.WorkingDir = "/workspace/source" // the Task declares no workspace
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: ns},
		Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{build, testStepWithEnv, lintStep}}}
	mustCreate(t, task)

	spoke := &v1alpha1.Task{}
	mustGet(t, client.ObjectKeyFromObject(task), spoke)
	spoke.Spec.Steps = []v1alpha1.Step{
		{Name: "test", Image: "golang:1.26", Script: "go test -race ./..."}, // script edited, moved first
		{Name: "compile", Image: "golang:1.26"},                             // build, renamed
		spoke.Spec.Steps[2],                                                 // lint, as it was
	}
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatalf("editing the steps through v1alpha1: %v", err)
	}

	got := &v1beta1.Task{}
	mustGet(t, client.ObjectKeyFromObject(task), got)
	test := testStepWithEnv
	test.Script = "go test -race ./..."
	want := []v1beta1.Step{test, {Name: "compile", Image: "golang:1.26"}, lintStep}
	if diff := cmp.Diff(want, got.Spec.Steps); diff != "" {
		t.Errorf("steps after the v1alpha1 edit (-want +got):\n%s", diff)
	}
}
