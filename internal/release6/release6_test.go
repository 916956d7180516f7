package release6

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

func TestTaskFields(t *testing.T) {
	tests := map[string]struct {
		params []v1.ParamSpec
		want   []string
	}{
		"no params":              {},
		"string param":           {params: []v1.ParamSpec{{Name: "a", Default: v1.NewStringValue("x")}}},
		"explicitly string":      {params: []v1.ParamSpec{{Name: "a", Type: v1.ParamTypeString}}},
		"array param":            {params: []v1.ParamSpec{{Name: "a", Type: v1.ParamTypeArray}}, want: []string{"spec.params[0].type"}},
		"object param":           {params: []v1.ParamSpec{{Name: "a", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"k": {}}}}, want: []string{"spec.params[0].type"}},
		"properties on a string": {params: []v1.ParamSpec{{Name: "a", Properties: map[string]v1.PropertySpec{"k": {}}}}, want: []string{"spec.params[0].properties"}},
		"array default":          {params: []v1.ParamSpec{{Name: "b"}, {Name: "a", Default: v1.NewArrayValue("x")}}, want: []string{"spec.params[1].default"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task := &v1.Task{Spec: v1.TaskSpec{Params: tc.params}}
			if diff := cmp.Diff(tc.want, fieldPaths(TaskFields(task))); diff != "" {
				t.Errorf("TaskFields() paths mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskRunFields(t *testing.T) {
	tests := map[string]struct {
		spec v1.TaskRunSpec
		want []string
	}{
		"nothing":         {},
		"string value":    {spec: v1.TaskRunSpec{Params: []v1.Param{{Name: "a", Value: *v1.NewStringValue("x")}}}},
		"total timeout":   {spec: v1.TaskRunSpec{Timeouts: v1.Timeouts{Total: &v1.Duration{}}}},
		"object value":    {spec: v1.TaskRunSpec{Params: []v1.Param{{Name: "a", Value: *v1.NewObjectValue(nil)}}}, want: []string{"spec.params[0].value"}},
		"pending timeout": {spec: v1.TaskRunSpec{Timeouts: v1.Timeouts{Pending: &v1.Duration{}}}, want: []string{"spec.timeouts.pending"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: tc.spec}
			errs := TaskRunFields(run)
			if diff := cmp.Diff(tc.want, fieldPaths(errs)); diff != "" {
				t.Errorf("TaskRunFields() paths mismatch (-want +got):\n%s", diff)
			}
			for _, err := range errs {
				if !cmp.Equal(err.Type, field.ErrorTypeForbidden) {
					t.Errorf("%s: type %s, want Forbidden", err.Field, err.Type)
				}
			}
		})
	}
}

func fieldPaths(errs field.ErrorList) []string {
	var paths []string
	for _, err := range errs {
		paths = append(paths, err.Field)
	}
	return paths
}

func TestInStash(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        bool
	}{
		"no annotations":          {},
		"other annotations":       {annotations: map[string]string{"team": "a"}},
		"a v1beta1 section only":  {annotations: map[string]string{StashKey: `{"v1beta1":{"spec":{"description":"d"}}}`}},
		"an empty v1 section":     {annotations: map[string]string{StashKey: `{"v1":{}}`}},
		"a param said string":     {annotations: map[string]string{StashKey: `{"v1":{"spec":{"params":[{"name":"a","type":"string"}]}}}`}},
		"an array param":          {annotations: map[string]string{StashKey: `{"v1":{"spec":{"params":[{"name":"a","type":"array"}]}}}`}, want: true},
		"properties":              {annotations: map[string]string{StashKey: `{"v1":{"spec":{"params":[{"name":"a","properties":{"k":{}}}]}}}`}, want: true},
		"a v1 section":            {annotations: map[string]string{StashKey: `{"v1":{"spec":{"pending":"5m"}}}`}, want: true},
		"a stash that is no JSON": {annotations: map[string]string{StashKey: `{"v1":`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := InStash(tc.annotations); got != tc.want {
				t.Errorf("InStash(%v) = %t, want %t", tc.annotations, got, tc.want)
			}
		})
	}
}
