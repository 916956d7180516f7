package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/fixtures"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestTypedParams starts, describes and reruns runs of array and object
// params, with both timeouts.
func TestTypedParams(t *testing.T) {
	h := newHarness(t)
	h.Create(t, fixtures.LintTask(""))

	started := func(name string) result {
		return result{Stdout: "TaskRun " + name + " started in namespace NS\nFollow its logs with: kubectl task logs " + name + " -f -n NS\n"}
	}
	image := func(repo, tag string) v1.ParamValue {
		return *v1.NewObjectValue(map[string]string{"repo": repo, "tag": tag})
	}
	lint1 := v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "lint"},
		Params:   []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a.go", "b.go")}, {Name: "image", Value: image("r", "t")}},
		Timeouts: v1.Timeouts{Total: v1.NewDuration(10 * time.Minute), Pending: v1.NewDuration(5 * time.Minute)}}
	tests := []struct {
		name     string
		args     []string
		want     result
		wantSpec *v1.TaskRunSpec
	}{
		{
			name: "an array between commas, an object as pairs, both timeouts",
			args: []string{"start", "lint", "-p", "files=a.go,b.go", "-p", "image=repo=r,tag=t", "--timeout", "10m", "--pending-timeout", "5m", "--name", "lint-1"},
			want: started("lint-1"), wantSpec: &lint1,
		},
		{
			name: "JSON, whose items may hold commas",
			args: []string{"start", "lint", "-p", `files=["a b.go","c,d.go"]`, "-p", `image={"repo":"r","tag":"t"}`, "-p", "mode=[x]", "--name", "lint-2"},
			want: started("lint-2"),
			wantSpec: &v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "lint"}, Params: []v1.Param{
				{Name: "files", Value: *v1.NewArrayValue("a b.go", "c,d.go")}, {Name: "image", Value: image("r", "t")},
				{Name: "mode", Value: *v1.NewStringValue("[x]")}}},
		},
		{
			name: "no item, and the object's default",
			args: []string{"start", "lint", "-p", "files=", "--name", "lint-3"},
			want: started("lint-3"),
			wantSpec: &v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "lint"}, Params: []v1.Param{
				{Name: "files", Value: *v1.NewArrayValue()}}},
		},
		{
			name: "an array of numbers, refused",
			args: []string{"start", "lint", "-p", "files=[1,2]", "--name", "lint-bad"},
			want: result{Code: 2, Stderr: `error: -p files: param "files" of Task "lint" is an array, and "[1,2]" is not a JSON array of strings: ` +
				`a JSON number where a string goes; give a JSON array of strings, ["a","b"], or items between commas, a,b; see 'kubectl task start --help'` + "\n"},
		},
		{
			name: "an object missing a key, refused",
			args: []string{"start", "lint", "-p", "files=a.go", "-p", "image=repo=r", "--name", "lint-bad"},
			want: result{Code: 2, Stderr: `error: -p image: param "image" of Task "lint" is an object, and it lacks the keys the param declares: tag; give a JSON object of strings, {"KEY":"VALUE"}, or KEY=VALUE pairs between commas, repo=VALUE,tag=VALUE; ` +
				`see 'kubectl task start --help'` + "\n"},
		},
		{
			name: "rerun: the values and both timeouts as they are",
			args: []string{"rerun", "lint-1", "--name", "lint-4"},
			want: result{Stdout: "TaskRun lint-4 started in namespace NS, with the settings of TaskRun lint-1\n" +
				"Follow its logs with: kubectl task logs lint-4 -f -n NS\n"},
			wantSpec: &lint1,
		},
		{
			name: "--last, with one value and one timeout given again",
			args: []string{"start", "lint", "--last", "-p", "files=z.go", "--pending-timeout", "0s", "--name", "lint-5"},
			want: result{Stdout: "TaskRun lint-5 started in namespace NS, with the settings of TaskRun lint-4\n" +
				"Follow its logs with: kubectl task logs lint-5 -f -n NS\n"},
			wantSpec: &v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "lint"},
				Params:   []v1.Param{{Name: "files", Value: *v1.NewArrayValue("z.go")}, {Name: "image", Value: image("r", "t")}},
				Timeouts: v1.Timeouts{Total: v1.NewDuration(10 * time.Minute), Pending: v1.NewDuration(0)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, h.kubectlTask(t, tc.args...)); diff != "" {
				t.Fatalf("kubectl task %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
			if tc.wantSpec == nil {
				return
			}
			name := tc.args[len(tc.args)-1]
			if diff := cmp.Diff(*tc.wantSpec, h.TaskRun(t, name).Spec); diff != "" {
				t.Errorf("TaskRun %s's spec (-want +got):\n%s", name, diff)
			}
		})
	}
	if names := h.TaskRunNames(t); len(names) != 5 {
		t.Errorf("runs: %v, want lint-1 to lint-5", names)
	}

	t.Run("describe", func(t *testing.T) {
		got := h.kubectlTask(t, "describe", "lint-1")
		for _, want := range []string{
			"\nTimeout:           10m0s\nPending timeout:   5m0s\n",
			"\nParams:\n" +
				"  NAME    TYPE     VALUE                    FROM\n" +
				`  files   array    ["a.go","b.go"]          run` + "\n" +
				`  image   object   {"repo":"r","tag":"t"}   run` + "\n" +
				"  mode    string   strict                   default\n\n",
		} {
			if got.Code != 0 || !strings.Contains(got.Stdout, want) {
				t.Errorf("describe lint-1 shows no\n%s\nin %+v", want, got)
			}
		}
		got = h.kubectlTask(t, "describe", "lint-3")
		if want := "\n  image   object   {\"repo\":\"example.org/app\",\"tag\":\"latest\"}   default\n"; !strings.Contains(got.Stdout, want) {
			t.Errorf("describe lint-3 shows no %q in:\n%s", want, got.Stdout)
		}
	})
}

// TestParamRetyped refuses to start again, with rerun or start --last, a
// run whose value is not of the type its Task now declares: the new run
// would end InvalidParams at once. A -p in its place is taken.
func TestParamRetyped(t *testing.T) {
	h := newHarness(t)
	task := wrappers.Task("", "lint").Param("files").Step("lint", "golang:1.26", "").Obj()
	h.Create(t, task, wrappers.TaskRun("", "lint-1", "lint").Param("files", "a.go").Obj())
	task.Spec.Params[0].Type = v1.ParamTypeArray
	if err := h.Env.Client.Update(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	// In order: the last starts the run that --last would take next.
	tests := []struct {
		name string
		args []string
		want result
	}{
		{
			name: "rerun",
			args: []string{"rerun", "lint-1"},
			want: result{Code: 1, Stderr: `error: Task "lint" now declares params of other types than TaskRun lint-1's values ` +
				`(param "files": its value is a string, but the param is an array); start it with: kubectl task start lint --last -p NAME=VALUE` + "\n"},
		},
		{
			name: "start --last",
			args: []string{"start", "lint", "--last"},
			want: result{Code: 2, Stderr: `error: TaskRun lint-1's values are not of the types Task "lint" now declares ` +
				`(param "files": its value is a string, but the param is an array); give each with -p NAME=VALUE; see 'kubectl task start --help'` + "\n"},
		},
		{
			name: "start --last with a value in its place",
			args: []string{"start", "lint", "--last", "-p", "files=a.go,b.go", "--name", "lint-2"},
			want: result{Stdout: "TaskRun lint-2 started in namespace NS, with the settings of TaskRun lint-1\n" +
				"Follow its logs with: kubectl task logs lint-2 -f -n NS\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, h.kubectlTask(t, tc.args...)); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}
