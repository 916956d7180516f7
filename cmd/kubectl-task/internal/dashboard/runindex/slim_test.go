package runindex_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestSlimKeepsTheRow checks that a slim run makes the same row of the
// runs list as the whole run, and keeps none of the rest.
func TestSlimKeepsTheRow(t *testing.T) {
	now := metav1.Now()
	run := wrappers.TaskRun("ns", "r", "build").Param("p", "a long value").Label("team", "web").
		Annotation("kubectl.kubernetes.io/last-applied-configuration", "{...}").
		Started(now).Completed(now).
		Conditions(metav1.Condition{Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "StepFailed", Message: "step exited 1"},
			metav1.Condition{Type: "Other", Status: metav1.ConditionTrue}).
		StepStates(v1.StepState{Name: "a", State: v1.StepTerminated}).
		Workspace(v1.WorkspaceBinding{Name: "w", EmptyDir: &corev1.EmptyDirVolumeSource{}}).Obj()
	run.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	run.Spec.Retries = ptr.To[int32](2)
	run.Status.Attempts = []v1.Attempt{{PodName: "r-pod", Message: "evicted"}}
	run.Status.Results = []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:...")}}

	obj, err := runindex.Slim(run)
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*v1.TaskRun)
	if diff := cmp.Diff(pages.NewRunRow(run, now.Time), pages.NewRunRow(slim, now.Time)); diff != "" {
		t.Errorf("the slim run's row (-whole +slim):\n%s", diff)
	}
	if slim.ManagedFields != nil || slim.Annotations != nil || slim.Spec.Params != nil || slim.Spec.Workspaces != nil ||
		slim.Status.Steps != nil || slim.Status.Results != nil || len(slim.Status.Conditions) != 1 || slim.Status.Attempts[0].Message != "" {
		t.Errorf("the slim run keeps more than its row: %+v", slim)
	}
}
