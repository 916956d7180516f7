package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestStartFile: start -f runs a Task file of any served version without
// applying it, its spec inline in the run, with start's flags.
func TestStartFile(t *testing.T) {
	h := newHarness(t)
	h.startController(t)
	dir := t.TempDir()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	greet := greetTask("greet")
	greet.APIVersion, greet.Kind = v1.GroupVersion.String(), "Task"
	v1Text, err := yaml.Marshal(greet)
	if err != nil {
		t.Fatal(err)
	}
	v1File := file("v1.yaml", string(v1Text))
	betaFile := file("v1beta1.yaml", `apiVersion: minitask.dev/v1beta1
kind: Task
metadata: {name: beta}
spec:
  params: [{name: greeting}]
  steps: [{name: say, image: alpine:3, script: 'echo $(params.greeting)'}]
`)
	alphaFile := file("v1alpha1.yaml", `apiVersion: minitask.dev/v1alpha1
kind: Task
metadata: {name: alpha}
spec:
  steps: [{name: say, image: alpine:3, script: echo alpha}]
`)

	t.Run("v1, named", func(t *testing.T) {
		got := h.kubectlTask(t, "start", "-f", v1File, "-p", "greeting=hi", "--name", "file-1")
		want := result{Stdout: "TaskRun file-1 started in namespace NS\nFollow its logs with: kubectl task logs file-1 -f -n NS\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("start -f (-want +got):\n%s", diff)
		}
		wantSpec := v1.TaskRunSpec{TaskSpec: &greet.Spec, Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}}}
		if diff := cmp.Diff(wantSpec, h.TaskRun(t, "file-1").Spec); diff != "" {
			t.Errorf("TaskRun spec (-want +got):\n%s", diff)
		}
		pod := &corev1.Pod{}
		testenv.Eventually(t, func() (bool, string) {
			err := env.Client.Get(context.Background(), h.Key("file-1-pod"), pod)
			return err == nil, fmt.Sprint(err)
		}, "the run's Pod")
		if cmd := strings.Join(pod.Spec.Containers[0].Command, " "); !strings.Contains(cmd, `echo "hi, world"`) {
			t.Errorf("step say runs %q, want the script with hi and the default world", cmd)
		}
		testenv.Eventually(t, func() (bool, string) {
			out := h.kubectlTask(t, "describe", "file-1").Stdout
			return strings.Contains(out, "(inline: spec.taskSpec)") && strings.Contains(out, "  greeting   string   hi      run\n"), out
		}, "describe file-1 to show its inline spec and params")
	})

	for name, tc := range map[string]struct {
		path, params, wantPrefix, wantScript string
	}{
		"v1beta1, its name generated":  {path: betaFile, params: "greeting=hey", wantPrefix: "beta", wantScript: "echo $(params.greeting)"},
		"v1alpha1, its name generated": {path: alphaFile, wantPrefix: "alpha", wantScript: "echo alpha"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"start", "-f", tc.path}
			if tc.params != "" {
				args = append(args, "-p", tc.params)
			}
			got := h.kubectlTask(t, args...)
			m := regexp.MustCompile(`^TaskRun (` + tc.wantPrefix + `-[a-z0-9]{5}) started`).FindStringSubmatch(got.Stdout)
			if got.Code != 0 || m == nil {
				t.Fatalf("start -f %s: %+v", tc.path, got)
			}
			run := h.TaskRun(t, m[1])
			if run.Spec.TaskSpec == nil || run.Spec.TaskRef.Name != "" || run.Spec.TaskSpec.Steps[0].Script != tc.wantScript {
				t.Errorf("TaskRun %s: taskRef %q, taskSpec %+v; want the file's spec inline", m[1], run.Spec.TaskRef.Name, run.Spec.TaskSpec)
			}
		})
	}

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"a name and -f":       {args: []string{"start", "greet", "-f", v1File}, want: "give the name of a Task or -f FILE, not both"},
		"--last and -f":       {args: []string{"start", "-f", v1File, "--last"}, want: "--last repeats a run of a Task of the cluster"},
		"a param missing":     {args: []string{"start", "-f", v1File}, want: "greeting"},
		"no such file":        {args: []string{"start", "-f", filepath.Join(dir, "none.yaml")}, want: "reading the Task file"},
		"not a Task":          {args: []string{"start", "-f", file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")}, want: `holds kind "ConfigMap", not a Task`},
		"an unknown field":    {args: []string{"start", "-f", file("typo.yaml", strings.Replace(string(v1Text), "steps:", "stepz:", 1))}, want: "stepz"},
		"neither name nor -f": {args: []string{"start"}, want: "needs the name of a Task, or -f FILE"},
	} {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			if got.Code == 0 || !strings.Contains(got.Stderr, tc.want) {
				t.Errorf("%s: %+v, want a failure saying %q", strings.Join(tc.args, " "), got, tc.want)
			}
		})
	}
}
