package cli_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// pruneHistory fills h's namespace, where no controller runs, with runs of
// greet, newest first:
//
//	g-5   Running, started 1m ago
//	g-4   Succeeded, finished 30m ago
//	g-3   Succeeded, finished 2h ago
//	g-2   Failed(StepFailed), finished 3h ago
//	g-1   Succeeded, finished 5h ago
//
// and o-1, a run of another Task, finished 5h ago.
func (h *harness) pruneHistory(t *testing.T) {
	t.Helper()
	h.Create(t, greetTask("greet"), greetTask("other"))
	for _, name := range []string{"g-1", "g-2", "g-3", "g-4", "g-5"} {
		h.Create(t, wrappers.TaskRun("", name, "greet").Param("greeting", "hi").Obj())
	}
	h.Create(t, wrappers.TaskRun("", "o-1", "other").Param("greeting", "hi").Obj())
	h.setRunStatus(t, "g-1", h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -5*time.Hour-time.Minute, -5*time.Hour))
	h.setRunStatus(t, "g-2", h.finishedStatus(v1.ReasonStepFailed, `step "say" exited with code 3`, -3*time.Hour-time.Minute, -3*time.Hour))
	h.setRunStatus(t, "g-3", h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -2*time.Hour-time.Minute, -2*time.Hour))
	h.setRunStatus(t, "g-4", h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -31*time.Minute, -30*time.Minute))
	h.setRunStatus(t, "g-5", v1.TaskRunStatus{
		Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: string(v1.ReasonRunning),
			Message: `running step "say" (2 of 2)`, ObservedGeneration: 1, LastTransitionTime: *h.at(-time.Minute)}},
		StartTime: h.at(-time.Minute),
	})
	h.setRunStatus(t, "o-1", h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -5*time.Hour-time.Minute, -5*time.Hour))
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	h.pruneHistory(t)
	all := []string{"g-1", "g-2", "g-3", "g-4", "g-5", "o-1"}
	// viewer may read runs, but not delete them.
	h.Grant(t, "viewer", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list"}})

	// Dry runs first: the API server checks each deletion and keeps every run.
	dryRuns := map[string]struct {
		args []string
		want result
	}{
		"beyond the newest 2 finished runs": {
			args: []string{"delete", "--task", "greet", "--keep", "2", "--dry-run"},
			want: result{Stdout: `TaskRun g-1 would be deleted (Succeeded, finished 5h ago)
TaskRun g-2 would be deleted (Failed(StepFailed), finished 3h ago)
2 runs of Task "greet" would be deleted; kept 2 finished runs and 1 that goes on. Dry run: nothing was deleted
`},
		},
		"finished longer ago than 150m": {
			args: []string{"delete", "--task", "greet", "--keep-since", "150m", "--dry-run"},
			want: result{Stdout: `TaskRun g-1 would be deleted (Succeeded, finished 5h ago)
TaskRun g-2 would be deleted (Failed(StepFailed), finished 3h ago)
2 runs of Task "greet" would be deleted; kept 2 finished runs and 1 that goes on. Dry run: nothing was deleted
`},
		},
		"both: beyond the newest 1 and finished over 1h ago": {
			args: []string{"delete", "--task", "greet", "--keep", "1", "--keep-since", "1h", "--dry-run"},
			want: result{Stdout: `TaskRun g-1 would be deleted (Succeeded, finished 5h ago)
TaskRun g-2 would be deleted (Failed(StepFailed), finished 3h ago)
TaskRun g-3 would be deleted (Succeeded, finished 120m ago)
3 runs of Task "greet" would be deleted; kept 1 finished run and 1 that goes on. Dry run: nothing was deleted
`},
		},
		"both, the newest 3 kept though old": {
			args: []string{"delete", "--task", "greet", "--keep", "3", "--keep-since", "10m", "--dry-run"},
			want: result{Stdout: `TaskRun g-1 would be deleted (Succeeded, finished 5h ago)
1 run of Task "greet" would be deleted; kept 3 finished runs and 1 that goes on. Dry run: nothing was deleted
`},
		},
		"keep 0 never takes a run that goes on": {
			args: []string{"delete", "--task", "greet", "--keep", "0", "--dry-run"},
			want: result{Stdout: `TaskRun g-1 would be deleted (Succeeded, finished 5h ago)
TaskRun g-2 would be deleted (Failed(StepFailed), finished 3h ago)
TaskRun g-3 would be deleted (Succeeded, finished 120m ago)
TaskRun g-4 would be deleted (Succeeded, finished 30m ago)
4 runs of Task "greet" would be deleted; kept 0 finished runs and 1 that goes on. Dry run: nothing was deleted
`},
		},
		"days": {
			args: []string{"delete", "--task", "greet", "--keep-since", "1d", "--dry-run"},
			want: result{Stdout: `No runs of Task "greet" to delete; kept 4 finished runs and 1 that goes on` + "\n"},
		},
		"someone who may not delete runs": {
			args: []string{"delete", "--task", "greet", "--keep", "3", "--dry-run", "--as", "viewer"},
			want: result{Code: 1, Stderr: `error: deleting TaskRun g-1, after 0 of 1: taskruns.minitask.dev "g-1" is forbidden: ` +
				`User "viewer" cannot delete resource "taskruns" in API group "minitask.dev" in the namespace "NS"` + "\n"},
		},
		"an unknown Task": {
			args: []string{"delete", "--task", "nope", "--keep", "1"},
			want: result{Code: 1, Stderr: `error: Task "nope" not found in namespace "NS"; list the Tasks there with: kubectl get tasks.minitask.dev -n NS` + "\n"},
		},
		"no --task": {
			args: []string{"delete", "--keep", "1"},
			want: result{Code: 2, Stderr: "error: delete needs --task TASK, the Task whose finished runs to delete; see 'kubectl task delete --help'\n"},
		},
		"neither --keep nor --keep-since": {
			args: []string{"delete", "--task", "greet"},
			want: result{Code: 2, Stderr: `error: delete needs --keep N, --keep-since DURATION or both, to say which finished runs of "greet" to keep; see 'kubectl task delete --help'` + "\n"},
		},
		"a negative --keep": {
			args: []string{"delete", "--task", "greet", "--keep", "-1"},
			want: result{Code: 2, Stderr: "error: --keep -1: it needs a number of runs, 0 or more; see 'kubectl task delete --help'\n"},
		},
		"a malformed --keep-since": {
			args: []string{"delete", "--task", "greet", "--keep-since", "1w"},
			want: result{Code: 2, Stderr: `error: --keep-since "1w" is not a duration such as 7d, 12h or 30m; see 'kubectl task delete --help'` + "\n"},
		},
		"more days than a duration holds": {
			// 106,752 days wrapped around to a negative age, a cutoff in
			// the future, and every finished run was deleted.
			args: []string{"delete", "--task", "greet", "--keep-since", "106752d"},
			want: result{Code: 2, Stderr: `error: --keep-since "106752d" is not a duration such as 7d, 12h or 30m; see 'kubectl task delete --help'` + "\n"},
		},
		"more days than an int holds": {
			args: []string{"delete", "--task", "greet", "--keep-since", "99999999999999999999d"},
			want: result{Code: 2, Stderr: `error: --keep-since "99999999999999999999d" is not a duration such as 7d, 12h or 30m; see 'kubectl task delete --help'` + "\n"},
		},
		"more hours than a duration holds": {
			args: []string{"delete", "--task", "greet", "--keep-since", "2562048h"},
			want: result{Code: 2, Stderr: `error: --keep-since "2562048h" is not a duration such as 7d, 12h or 30m; see 'kubectl task delete --help'` + "\n"},
		},
		"the most days a duration holds": {
			args: []string{"delete", "--task", "greet", "--keep-since", "106751d", "--dry-run"},
			want: result{Stdout: `No runs of Task "greet" to delete; kept 4 finished runs and 1 that goes on` + "\n"},
		},
		"a run's name": {
			args: []string{"delete", "g-1"},
			want: result{Code: 2, Stderr: "error: kubectl task delete takes no run names but --task TASK; delete one run with: kubectl delete taskrun NAME; see 'kubectl task delete --help'\n"},
		},
	}
	for name, tc := range dryRuns {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(all, sorted(h.TaskRunNames(t))); diff != "" {
				t.Errorf("TaskRuns after kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}

	t.Run("deleted", func(t *testing.T) {
		got := h.kubectlTask(t, "delete", "--task", "greet", "--keep", "1")
		want := result{Stdout: `TaskRun g-1 deleted (Succeeded, finished 5h ago)
TaskRun g-2 deleted (Failed(StepFailed), finished 3h ago)
TaskRun g-3 deleted (Succeeded, finished 120m ago)
Deleted 3 runs of Task "greet"; kept 1 finished run and 1 that goes on
`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("delete --keep 1 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"g-4", "g-5", "o-1"}, sorted(h.TaskRunNames(t))); diff != "" {
			t.Errorf("TaskRuns left (-want +got):\n%s", diff)
		}
	})
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
