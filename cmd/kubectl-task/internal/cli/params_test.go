package cli

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
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
		spec  v1.ParamSpec
		given []v1.Param
		want  [][]string
	}{
		"a plain value": {
			spec:  v1.ParamSpec{Name: "greeting"},
			given: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
			want:  [][]string{{"greeting", "string", "hi", "run"}},
		},
		"a value over lines, quoted onto one": {
			spec:  v1.ParamSpec{Name: "script"},
			given: []v1.Param{{Name: "script", Value: *v1.NewStringValue("set -e\nmake\n")}},
			want:  [][]string{{"script", "string", `"set -e\nmake\n"`, "run"}},
		},
		"an empty value": {
			spec:  v1.ParamSpec{Name: "greeting"},
			given: []v1.Param{{Name: "greeting"}},
			want:  [][]string{{"greeting", "string", `""`, "run"}},
		},
		"a value of 64 KiB, cut": {
			spec:  v1.ParamSpec{Name: "greeting"},
			given: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue(long)}},
			want:  [][]string{{"greeting", "string", long[:100] + "... (65536 bytes in all; kubectl get tr -o yaml shows it whole)", "run"}},
		},
		"a default over lines": {
			spec: v1.ParamSpec{Name: "greeting", Default: v1.NewStringValue("hello\nworld")},
			want: [][]string{{"greeting", "string", `"hello\nworld"`, "default"}},
		},
		"a default of 64 KiB, cut, whole in the Task": {
			spec: v1.ParamSpec{Name: "greeting", Default: v1.NewStringValue(long)},
			want: [][]string{{"greeting", "string", long[:100] + "... (65536 bytes in all; kubectl get task -o yaml shows it whole)", "default"}},
		},
		"a value for a param not declared": {
			spec:  v1.ParamSpec{Name: "greeting", Default: v1.NewStringValue("hi")},
			given: []v1.Param{{Name: "gretting", Value: *v1.NewStringValue("a\tb")}},
			want:  [][]string{{"greeting", "string", "hi", "default"}, {"gretting", "string", `"a\tb"`, "ignored: not declared"}},
		},
		"an array value, as JSON": {
			spec:  v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
			given: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a.go", "b c.go")}},
			want:  [][]string{{"files", "array", `["a.go","b c.go"]`, "run"}},
		},
		"an empty array": {
			spec:  v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
			given: []v1.Param{{Name: "files", Value: *v1.NewArrayValue()}},
			want:  [][]string{{"files", "array", "[]", "run"}},
		},
		"an object default, as JSON with its keys sorted": {
			spec: v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}},
				Default: v1.NewObjectValue(map[string]string{"tag": "latest", "repo": "example.org/app"})},
			want: [][]string{{"image", "object", `{"repo":"example.org/app","tag":"latest"}`, "default"}},
		},
		"an array item over lines, escaped by JSON": {
			spec:  v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
			given: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a\nb")}},
			want:  [][]string{{"files", "array", `["a\nb"]`, "run"}},
		},
		"an array for a param not declared: its own type": {
			spec:  v1.ParamSpec{Name: "greeting", Default: v1.NewStringValue("hi")},
			given: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("x")}},
			want:  [][]string{{"greeting", "string", "hi", "default"}, {"files", "array", `["x"]`, "ignored: not declared"}},
		},
		"a param without a value": {
			spec: v1.ParamSpec{Name: "greeting"},
			want: [][]string{{"greeting", "string", "<none>", "missing"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			task := &v1.Task{Spec: v1.TaskSpec{Params: []v1.ParamSpec{tc.spec}}}
			run := &v1.TaskRun{Spec: v1.TaskRunSpec{Params: tc.given}}
			var out bytes.Buffer
			d := describer{w: newTabWriter(&out)}
			d.params(run, task, "")
			if err := d.w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := append([][]string{{"Params:"}, {"NAME", "TYPE", "VALUE", "FROM"}}, tc.want...)
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
	task := &v1.Task{Spec: v1.TaskSpec{Params: []v1.ParamSpec{
		{Name: "name", Description: "Who to greet:\na name,\nor a nickname"},
		{Name: "greeting", Description: "What to say", Default: v1.NewStringValue("hello\nthere")},
		{Name: "closing", Default: v1.NewStringValue(long)},
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
