package cli_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/releases"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

// This file runs kubectl task against the CRDs of the releases before this
// one, as test/e2e/testdata keeps them: release 4's serve no v1, release 5's
// serve v1 but store v1beta1.

// apiServerURL is the test API server's URL, which changes from run to run.
var apiServerURL = regexp.MustCompile(`https://127\.0\.0\.1:\d+`)

// withoutHost is r with the API server's URL replaced by HOST.
func withoutHost(r result) result {
	r.Stdout = apiServerURL.ReplaceAllString(r.Stdout, "HOST")
	r.Stderr = apiServerURL.ReplaceAllString(r.Stderr, "HOST")
	return r
}

// TestAgainstRelease4 checks that against a cluster serving no
// minitask.dev/v1 every command says what the cluster serves and which
// release it needs, and does nothing.
func TestAgainstRelease4(t *testing.T) {
	e := testenv.ForTest(t, webhooks.SetupWithManager, releases.FrozenCRDs(t, "release-4-crds.yaml"))
	h := harnessOn(t, e)
	refusal := result{Code: 1, Stderr: "error: the cluster at HOST serves minitask.dev v1beta1, v1alpha1 but not v1: " +
		"its minitask is older than release 5, which this kubectl task needs; upgrade minitask there (docs/upgrading.md), " +
		"or use the kubectl task of its release\n"}
	for name, args := range map[string][]string{
		"list":      {"list"},
		"start":     {"start", "greet", "-p", "greeting=hi"},
		"describe":  {"describe", "greet-1"},
		"rerun":     {"rerun", "greet-1"},
		"cancel":    {"cancel", "greet-1"},
		"logs":      {"logs", "greet-1"},
		"delete":    {"delete", "--task", "greet", "--keep", "1"},
		"dashboard": {"dashboard"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(refusal, withoutHost(h.kubectlTask(t, args...))); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(args, " "), diff)
			}
		})
	}
	var runs v1beta1.TaskRunList
	if err := e.Client.List(context.Background(), &runs, client.InNamespace(h.NS)); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 0 {
		t.Errorf("%d runs created", len(runs.Items))
	}
}

// TestAgainstRelease5 checks that kubectl task works against release 5,
// which serves v1 and stores v1beta1, and that what release 5 refuses of
// what a user asked reaches the user in the API server's words.
func TestAgainstRelease5(t *testing.T) {
	e := testenv.ForTest(t, webhooks.SetupWithManager, releases.FrozenCRDs(t, "release-5-crds.yaml"))
	releases.RefuseAsRelease5(t, e)
	h := harnessOn(t, e)
	h.Create(t, greetTask("greet"))

	steps := []struct {
		name string
		args []string
		want result
	}{
		{
			name: "start",
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "greet-1", "--timeout", "10m"},
			want: result{Stdout: "TaskRun greet-1 started in namespace NS\nFollow its logs with: kubectl task logs greet-1 -f -n NS\n"},
		},
		{
			name: "rerun",
			args: []string{"rerun", "greet-1", "--name", "greet-2"},
			want: result{Stdout: "TaskRun greet-2 started in namespace NS, with the settings of TaskRun greet-1\n" +
				"Follow its logs with: kubectl task logs greet-2 -f -n NS\n"},
		},
		{
			name: "list",
			args: []string{"list", "-o", "name"},
			want: result{Stdout: "taskrun.minitask.dev/greet-2\ntaskrun.minitask.dev/greet-1\n"},
		},
		{
			name: "what only release 6 runs, refused in the API server's words",
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "greet-3", "--pending-timeout", "5m"},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			got := h.kubectlTask(t, step.args...)
			if step.want == (result{}) {
				// The API server words the refusal; the plugin passes it on.
				if got.Code != 1 || !strings.HasPrefix(got.Stderr, "error: ") ||
					!strings.Contains(got.Stderr, releases.Release5PendingRefusal) || got.Stdout != "" {
					t.Errorf("kubectl task %s: %+v, want exit 1 with the API server's refusal", strings.Join(step.args, " "), got)
				}
				return
			}
			if diff := cmp.Diff(step.want, got); diff != "" {
				t.Errorf("kubectl task %s (-want +got):\n%s", strings.Join(step.args, " "), diff)
			}
		})
	}
	for _, name := range []string{"greet-1", "greet-2"} {
		want := v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}, Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}},
			Timeouts: v1.Timeouts{Total: v1.NewDuration(10 * time.Minute)}}
		if diff := cmp.Diff(want, h.TaskRun(t, name).Spec); diff != "" {
			t.Errorf("TaskRun %s's spec (-want +got):\n%s", name, diff)
		}
	}
	out := h.kubectlTask(t, "describe", "greet-1")
	for _, want := range []string{"\nTimeout:           10m0s\n", "\n  greeting   string   hi      run\n"} {
		if out.Code != 0 || !strings.Contains(out.Stdout, want) {
			t.Errorf("describe greet-1 shows no %q: %+v", want, out)
		}
	}
}
