package runstate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func TestResolveParams(t *testing.T) {
	greeting := v1.ParamSpec{Name: "greeting", Description: "what to say", Default: v1.NewStringValue("hello")}
	flags := v1.ParamSpec{Name: "flags"}
	tests := map[string]struct {
		declared []v1.ParamSpec
		given    []v1.Param
		want     []runstate.ParamValue
	}{
		"no params": {want: []runstate.ParamValue{}},
		"default used": {
			declared: []v1.ParamSpec{greeting},
			want:     []runstate.ParamValue{{Spec: greeting, Value: v1.NewStringValue("hello"), Source: runstate.FromDefault}},
		},
		"run's value wins over default": {
			declared: []v1.ParamSpec{greeting},
			given:    []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
			want:     []runstate.ParamValue{{Spec: greeting, Value: v1.NewStringValue("hi"), Source: runstate.FromRun}},
		},
		"empty value counts as given": {
			declared: []v1.ParamSpec{flags},
			given:    []v1.Param{{Name: "flags"}},
			want:     []runstate.ParamValue{{Spec: flags, Value: &v1.ParamValue{}, Source: runstate.FromRun}},
		},
		"no value and no default: missing": {
			declared: []v1.ParamSpec{flags},
			want:     []runstate.ParamValue{{Spec: flags, Source: runstate.Missing}},
		},
		"undeclared value ignored, the Task's order kept": {
			declared: []v1.ParamSpec{greeting, flags},
			given:    []v1.Param{{Name: "extra", Value: *v1.NewStringValue("x")}, {Name: "flags", Value: *v1.NewStringValue("-v")}},
			want: []runstate.ParamValue{
				{Spec: greeting, Value: v1.NewStringValue("hello"), Source: runstate.FromDefault},
				{Spec: flags, Value: v1.NewStringValue("-v"), Source: runstate.FromRun},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := runstate.ResolveParams(&v1.Task{Spec: v1.TaskSpec{Params: tc.declared}}, tc.given)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ResolveParams() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParamValues(t *testing.T) {
	required := func(name string) v1.ParamSpec { return v1.ParamSpec{Name: name} }
	str := func(s string) v1.ParamValue { return *v1.NewStringValue(s) }
	files := v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewArrayValue("a.go")}
	image := v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}}}
	tests := map[string]struct {
		declared   []v1.ParamSpec
		given      []v1.Param
		wantValues params.Values
		want       runstate.ParamProblems
		wantText   string
	}{
		"no params": {wantValues: params.Values{Params: map[string]string{}}},
		"values and defaults by name, missing ones listed sorted": {
			declared:   []v1.ParamSpec{required("zeta"), {Name: "mid", Default: v1.NewStringValue("m")}, required("alpha"), required("given")},
			given:      []v1.Param{{Name: "given", Value: str("g")}, {Name: "extra", Value: str("x")}},
			wantValues: params.Values{Params: map[string]string{"mid": "m", "given": "g"}},
			want:       runstate.ParamProblems{Missing: []string{"alpha", "zeta"}},
			wantText:   "missing values for params with no default: alpha, zeta",
		},
		"an array and an object, by type": {
			declared: []v1.ParamSpec{files, image},
			given:    []v1.Param{{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t", "extra": "e"})}},
			wantValues: params.Values{
				Params:  map[string]string{},
				Arrays:  map[string][]string{"files": {"a.go"}},
				Objects: map[string]map[string]string{"image": {"repo": "r", "tag": "t", "extra": "e"}},
			},
		},
		"values of the wrong type, in the Task's order": {
			declared: []v1.ParamSpec{required("s"), files, image},
			given: []v1.Param{
				{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r"})},
				{Name: "files", Value: str("a.go b.go")},
				{Name: "s", Value: *v1.NewArrayValue("x")},
			},
			wantValues: params.Values{Params: map[string]string{}},
			want: runstate.ParamProblems{WrongType: []string{
				`param "s": its value is an array, but the param is a string`,
				`param "files": its value is a string, but the param is an array`,
				`param "image": its value lacks the keys the param declares: tag`,
			}},
			wantText: `param "s": its value is an array, but the param is a string; param "files": its value is a string, but the param is an array; param "image": its value lacks the keys the param declares: tag`,
		},
		"a default of the wrong type": {
			declared:   []v1.ParamSpec{{Name: "o", Type: v1.ParamTypeObject, Default: v1.NewStringValue("x")}},
			wantValues: params.Values{Params: map[string]string{}},
			want:       runstate.ParamProblems{WrongType: []string{`param "o": its default is a string, but the param is an object`}},
			wantText:   `param "o": its default is a string, but the param is an object`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task := &v1.Task{Spec: v1.TaskSpec{Params: tc.declared}}
			run := &v1.TaskRun{Spec: v1.TaskRunSpec{Params: tc.given}}
			values, problems := runstate.ParamValues(task, run)
			if diff := cmp.Diff(tc.wantValues, values); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, problems); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
			if got := problems.String(); got != tc.wantText {
				t.Errorf("message = %q, want %q", got, tc.wantText)
			}
			if problems.Any() != (tc.wantText != "") {
				t.Errorf("Any() = %v with message %q", problems.Any(), tc.wantText)
			}
		})
	}
}
