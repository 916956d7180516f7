package runops

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestRerunOf(t *testing.T) {
	greet := wrappers.Task("ns", "greet").Param("greeting").ParamDefault("name", "world").Step("say", "alpine:3", "echo").Obj()
	earlier := wrappers.TaskRun("ns", "greet-1", "greet").Param("greeting", "hi").Cancelled().
		Label("team", "build").Label(runstate.LabelTaskRun, "greet-1").Label(runstate.LabelManagedBy, runstate.ManagedByValue).Obj()
	lint := wrappers.Task("ns", "lint").Params(
		v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
		v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}}},
		v1.ParamSpec{Name: "empty", Type: v1.ParamTypeArray},
	).Step("lint", "golang:1.26", "").Obj()
	tests := map[string]struct {
		earlier *v1.TaskRun
		task    *v1.Task
		name    string
		want    *v1.TaskRun
		wantErr error
	}{
		"the settings without the cancel request or the controller's labels": {
			earlier: earlier, task: greet,
			want: &v1.TaskRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{"team": "build"}},
				Spec:       v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}, Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}}},
			},
		},
		"under a name of its own": {
			earlier: wrappers.TaskRun("ns", "greet-1", "greet").Param("greeting", "hi").Obj(), task: greet, name: "greet-2",
			want: &v1.TaskRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "greet-2"},
				Spec:       v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}, Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}}},
			},
		},
		"typed values and both timeouts, as they are": {
			earlier: &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lint-1"}, Spec: v1.TaskRunSpec{
				TaskRef: v1.TaskRef{Name: "lint"},
				Params: []v1.Param{
					{Name: "files", Value: *v1.NewArrayValue("a.go", "b.go")},
					{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t"})},
					{Name: "empty", Value: *v1.NewArrayValue()},
				},
				Timeouts: v1.Timeouts{Total: v1.NewDuration(time.Hour), Pending: v1.NewDuration(0)},
			}},
			task: lint,
			want: &v1.TaskRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
				Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "lint"}, Params: []v1.Param{
					{Name: "files", Value: *v1.NewArrayValue("a.go", "b.go")},
					{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t"})},
					{Name: "empty", Value: *v1.NewArrayValue()},
				}, Timeouts: v1.Timeouts{Total: v1.NewDuration(time.Hour), Pending: v1.NewDuration(0)}},
			},
		},
		"a value of another type than the Task now declares": {
			earlier: wrappers.TaskRun("ns", "lint-1", "lint").Params(
				v1.Param{Name: "files", Value: *v1.NewStringValue("a.go")},
				v1.Param{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t"})},
				v1.Param{Name: "empty", Value: *v1.NewArrayValue()}).Obj(),
			task:    lint,
			wantErr: &WrongTypeParamsError{Task: "lint", Problems: []string{`param "files": its value is a string, but the param is an array`}},
		},
		"a param the Task now requires": {
			earlier: wrappers.TaskRun("ns", "greet-1", "greet").Obj(), task: greet,
			wantErr: &MissingParamsError{Task: "greet", Missing: []string{"greeting"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := RerunOf(tc.earlier, tc.task, tc.name)
			if diff := cmp.Diff(tc.wantErr, err); diff != "" {
				t.Errorf("RerunOf error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RerunOf (-want +got):\n%s", diff)
			}
		})
	}
}
