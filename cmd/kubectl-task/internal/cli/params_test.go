package cli

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
)

// cellGap is what separates the cells of an aligned table.
var cellGap = regexp.MustCompile(` {3,}`)

// cells splits the rows of an aligned table into their cells: a table's
// columns are at least 3 spaces apart, and the values here hold no more
// than one space in a row.
func cells(table string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		rows = append(rows, cellGap.Split(strings.TrimSpace(line), -1))
	}
	return rows
}

// long is a value of 64 KiB, the most a param's value may be.
var long = strings.Repeat("0123456789abcdef", 4096)

// TestDescribeParams checks that describe shows each param's value on one
// row, as it shows env values and results: quoted onto one line, cut at 100
// characters.
func TestDescribeParams(t *testing.T) {
	tests := map[string]struct {
		spec  v1beta1.ParamSpec
		given []v1beta1.Param
		want  [][]string
	}{
		"a plain value": {
			spec:  v1beta1.ParamSpec{Name: "greeting"},
			given: []v1beta1.Param{{Name: "greeting", Value: "hi"}},
			want:  [][]string{{"greeting", "hi", "run"}},
		},
		"a value over lines, quoted onto one": {
			spec:  v1beta1.ParamSpec{Name: "script"},
			given: []v1beta1.Param{{Name: "script", Value: "set -e\nmake\n"}},
			want:  [][]string{{"script", `"set -e\nmake\n"`, "run"}},
		},
		"an empty value": {
			spec:  v1beta1.ParamSpec{Name: "greeting"},
			given: []v1beta1.Param{{Name: "greeting"}},
			want:  [][]string{{"greeting", `""`, "run"}},
		},
		"a value of 64 KiB, cut": {
			spec:  v1beta1.ParamSpec{Name: "greeting"},
			given: []v1beta1.Param{{Name: "greeting", Value: long}},
			want:  [][]string{{"greeting", long[:100] + "... (65536 bytes in all; kubectl get tr -o yaml shows it whole)", "run"}},
		},
		"a default over lines": {
			spec: v1beta1.ParamSpec{Name: "greeting", Default: ptr.To("hello\nworld")},
			want: [][]string{{"greeting", `"hello\nworld"`, "default"}},
		},
		"a default of 64 KiB, cut, whole in the Task": {
			spec: v1beta1.ParamSpec{Name: "greeting", Default: ptr.To(long)},
			want: [][]string{{"greeting", long[:100] + "... (65536 bytes in all; kubectl get task -o yaml shows it whole)", "default"}},
		},
		"a value for a param not declared": {
			spec:  v1beta1.ParamSpec{Name: "greeting", Default: ptr.To("hi")},
			given: []v1beta1.Param{{Name: "gretting", Value: "a\tb"}},
			want:  [][]string{{"greeting", "hi", "default"}, {"gretting", `"a\tb"`, "ignored: not declared"}},
		},
		"a param without a value": {
			spec: v1beta1.ParamSpec{Name: "greeting"},
			want: [][]string{{"greeting", "<none>", "missing"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task := &v1beta1.Task{Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{tc.spec}}}
			run := &v1beta1.TaskRun{Spec: v1beta1.TaskRunSpec{Params: tc.given}}
			var out bytes.Buffer
			d := describer{w: newTabWriter(&out)}
			d.params(run, task, "")
			if err := d.w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := append([][]string{{"Params:"}, {"NAME", "VALUE", "FROM"}}, tc.want...)
			if diff := cmp.Diff(want, cells(strings.TrimPrefix(out.String(), "\n"))); diff != "" {
				t.Errorf("Params (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingParamsListsDefaults checks that start's refusal of a run without
// a required param lists the others' defaults and every description on one
// line each, as describe shows values.
func TestMissingParamsListsDefaults(t *testing.T) {
	task := &v1beta1.Task{Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{
		{Name: "name", Description: "Who to greet:\na name,\nor a nickname"},
		{Name: "greeting", Description: "What to say", Default: ptr.To("hello\nthere")},
		{Name: "closing", Default: ptr.To(long)},
	}}}
	err := checkParams(nil, task, runinfo.Params(task, nil))
	var usage *usageError
	if !errors.As(err, &usage) {
		t.Fatalf("checkParams: %v, want a usage error", err)
	}
	want := [][]string{
		{"name", "Who to greet: a name, or a nickname"},
		{"These have defaults, and may be left out:"},
		{`greeting="hello\nthere"`, "What to say"},
		{"closing=" + long[:100] + "... (65536 bytes in all; kubectl get task -o yaml shows it whole)", "(no description)"},
	}
	if diff := cmp.Diff(want, cells(usage.detail)); diff != "" {
		t.Errorf("the params listed (-want +got):\n%s", diff)
	}
}
