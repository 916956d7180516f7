package runstate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func TestResolveParams(t *testing.T) {
	greeting := v1beta1.ParamSpec{Name: "greeting", Description: "what to say", Default: ptr.To("hello")}
	flags := v1beta1.ParamSpec{Name: "flags"}
	tests := map[string]struct {
		declared []v1beta1.ParamSpec
		given    []v1beta1.Param
		want     []runstate.ParamValue
	}{
		"no params": {want: []runstate.ParamValue{}},
		"default used": {
			declared: []v1beta1.ParamSpec{greeting},
			want:     []runstate.ParamValue{{Spec: greeting, Value: "hello", Source: runstate.FromDefault}},
		},
		"run's value wins over default": {
			declared: []v1beta1.ParamSpec{greeting},
			given:    []v1beta1.Param{{Name: "greeting", Value: "hi"}},
			want:     []runstate.ParamValue{{Spec: greeting, Value: "hi", Source: runstate.FromRun}},
		},
		"empty value counts as given": {
			declared: []v1beta1.ParamSpec{flags},
			given:    []v1beta1.Param{{Name: "flags"}},
			want:     []runstate.ParamValue{{Spec: flags, Source: runstate.FromRun}},
		},
		"no value and no default: missing": {
			declared: []v1beta1.ParamSpec{flags},
			want:     []runstate.ParamValue{{Spec: flags, Source: runstate.Missing}},
		},
		"undeclared value ignored, the Task's order kept": {
			declared: []v1beta1.ParamSpec{greeting, flags},
			given:    []v1beta1.Param{{Name: "extra", Value: "x"}, {Name: "flags", Value: "-v"}},
			want: []runstate.ParamValue{
				{Spec: greeting, Value: "hello", Source: runstate.FromDefault},
				{Spec: flags, Value: "-v", Source: runstate.FromRun},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := runstate.ResolveParams(&v1beta1.Task{Spec: v1beta1.TaskSpec{Params: tc.declared}}, tc.given)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ResolveParams() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParamValues(t *testing.T) {
	required := func(name string) v1beta1.ParamSpec { return v1beta1.ParamSpec{Name: name} }
	tests := map[string]struct {
		declared    []v1beta1.ParamSpec
		given       []v1beta1.Param
		wantValues  map[string]string
		wantMissing []string
	}{
		"no params": {wantValues: map[string]string{}},
		"values and defaults by name, missing ones listed sorted": {
			declared:    []v1beta1.ParamSpec{required("zeta"), {Name: "mid", Default: ptr.To("m")}, required("alpha"), required("given")},
			given:       []v1beta1.Param{{Name: "given", Value: "g"}, {Name: "extra", Value: "x"}},
			wantValues:  map[string]string{"mid": "m", "given": "g"},
			wantMissing: []string{"alpha", "zeta"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task := &v1beta1.Task{Spec: v1beta1.TaskSpec{Params: tc.declared}}
			run := &v1beta1.TaskRun{Spec: v1beta1.TaskRunSpec{Params: tc.given}}
			values, missing := runstate.ParamValues(task, run)
			if diff := cmp.Diff(tc.wantValues, values); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("missing mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
