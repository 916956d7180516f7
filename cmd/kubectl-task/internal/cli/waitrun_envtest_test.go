package cli_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestWaitForARunDeletedAsItFinishes checks that --wait and --showlog, of
// start and rerun, report how a run ended when it is deleted right after
// its final status write, as the controller deletes a run whose TTL after
// finishing is 0; and what they say of a run deleted before it finished.
// No controller runs: the test writes the run's status and deletes it.
func TestWaitForARunDeletedAsItFinishes(t *testing.T) {
	h := newHarness(t)
	h.Create(t, greetTask("greet"), wrappers.TaskRun("", "greet-earlier", "greet").Param("greeting", "hi").Obj())
	h.logs = cannedLogs{"prepare": "preparing\n", "say": "hi, world\n"}
	succeeded := h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -3*time.Second, 0)
	failed := h.finishedStatus(v1.ReasonStepFailed, `step "say" exited with code 3`, -3*time.Second, 0)
	started := func(run string) string {
		return fmt.Sprintf("TaskRun %s started in namespace NS\nFollow its logs with: kubectl task logs %s -f -n NS\n", run, run)
	}

	tests := map[string]struct {
		args []string
		// run is the run the command starts; status, if set, is its final
		// status, written just before it is deleted.
		run    string
		status *v1.TaskRunStatus
		want   result
	}{
		"start --wait, the run succeeded": {
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "wait-ok", "--wait"},
			run:  "wait-ok", status: &succeeded,
			want: result{Stdout: started("wait-ok") + "TaskRun wait-ok succeeded in 3s\n"},
		},
		"start --wait, the run failed": {
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "wait-bad", "--wait"},
			run:  "wait-bad", status: &failed,
			want: result{Code: 1, Stdout: started("wait-bad"),
				Stderr: `error: TaskRun wait-bad failed (StepFailed): step "say" exited with code 3; see kubectl task describe wait-bad -n NS` + "\n"},
		},
		"start --showlog": {
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "showlog-ok", "--showlog"},
			run:  "showlog-ok", status: &succeeded,
			want: result{Stdout: started("showlog-ok") + "[prepare] preparing\n[say] hi, world\nTaskRun showlog-ok succeeded in 3s\n"},
		},
		"rerun --wait": {
			args: []string{"rerun", "greet-earlier", "--name", "rerun-ok", "--wait"},
			run:  "rerun-ok", status: &succeeded,
			want: result{Stdout: "TaskRun rerun-ok started in namespace NS, with the settings of TaskRun greet-earlier\n" +
				"Follow its logs with: kubectl task logs rerun-ok -f -n NS\nTaskRun rerun-ok succeeded in 3s\n"},
		},
		"a run deleted before it finished": {
			args: []string{"start", "greet", "-p", "greeting=hi", "--name", "wait-deleted", "--wait"},
			run:  "wait-deleted",
			want: result{Code: 1, Stdout: started("wait-deleted"),
				Stderr: "error: TaskRun wait-deleted was deleted while it was Pending, before it finished: someone deleted it, or its namespace, and its outcome is lost\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			done := h.startAsync(t, tc.args...)
			testenv.Eventually(t, func() (bool, string) {
				err := env.Client.Get(context.Background(), h.Key(tc.run), &v1.TaskRun{})
				return err == nil, fmt.Sprint(err)
			}, "TaskRun %s to be created", tc.run)
			if tc.status != nil {
				h.setRunStatus(t, tc.run, *tc.status)
			}
			// Gone at once: the controller deletes in the foreground, and
			// the garbage collector, which envtest lacks, soon deletes the
			// run after its Pod.
			if err := env.Client.Delete(context.Background(), &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: tc.run}}); err != nil {
				t.Fatalf("deleting TaskRun %s: %v", tc.run, err)
			}
			if diff := cmp.Diff(tc.want, <-done); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}

	t.Run("someone who may not watch runs", func(t *testing.T) {
		h.Grant(t, "starter", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list", "create"}})
		got := h.kubectlTask(t, "start", "greet", "-p", "greeting=hi", "--name", "wait-unwatched", "--wait", "--as", "starter")
		want := result{Code: 1, Stdout: started("wait-unwatched"),
			Stderr: `error: waiting for TaskRun wait-unwatched to finish: taskruns.minitask.dev "wait-unwatched" is forbidden: ` +
				`User "starter" cannot watch resource "taskruns" in API group "minitask.dev" in the namespace "NS"` + "\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("start --wait as starter (-want +got):\n%s", diff)
		}
	})
}
