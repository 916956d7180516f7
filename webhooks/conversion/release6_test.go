package conversion

import (
	"context"
	"testing"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/release6"
)

// TestRelease6SeesTheStash holds release6.InStash, which release 5's
// controller reads v1beta1 objects by, to what conversion writes: true
// exactly when the v1 object holds what only release 6 can run.
func TestRelease6SeesTheStash(t *testing.T) {
	if release6.StashKey != AnnotationConversionData {
		t.Fatalf("release6.StashKey is %q, want %q", release6.StashKey, AnnotationConversionData)
	}
	ctx := context.Background()
	step := []v1.Step{{Name: "s", Image: "i"}}
	tasks := map[string]*v1.Task{
		"string params":  {Spec: v1.TaskSpec{Steps: step, Params: []v1.ParamSpec{{Name: "a", Type: v1.ParamTypeString, Default: v1.NewStringValue("x")}}}},
		"an array param": {Spec: v1.TaskSpec{Steps: step, Params: []v1.ParamSpec{{Name: "a", Type: v1.ParamTypeArray}}}},
	}
	for name, task := range tasks {
		var beta v1beta1.Task
		if err := ConvertBetaTaskFromHub(ctx, task, &beta); err != nil {
			t.Fatal(err)
		}
		if got, want := release6.InStash(beta.Annotations), len(release6.TaskFields(task)) > 0; got != want {
			t.Errorf("%s: InStash = %t, want %t (%v)", name, got, want, beta.Annotations)
		}
	}
	runs := map[string]*v1.TaskRun{
		"a total timeout":   {Spec: v1.TaskRunSpec{Timeouts: v1.Timeouts{Total: v1.NewDuration(time.Hour)}}},
		"a pending timeout": {Spec: v1.TaskRunSpec{Timeouts: v1.Timeouts{Pending: v1.NewDuration(time.Hour)}}},
		"an object value":   {Spec: v1.TaskRunSpec{Params: []v1.Param{{Name: "a", Value: *v1.NewObjectValue(map[string]string{"k": "v"})}}}},
	}
	for name, run := range runs {
		var beta v1beta1.TaskRun
		if err := ConvertBetaTaskRunFromHub(ctx, run, &beta); err != nil {
			t.Fatal(err)
		}
		if got, want := release6.InStash(beta.Annotations), len(release6.TaskRunFields(run)) > 0; got != want {
			t.Errorf("%s: InStash = %t, want %t (%v)", name, got, want, beta.Annotations)
		}
	}
}
