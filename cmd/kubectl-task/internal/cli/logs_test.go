package cli_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

func TestLogs(t *testing.T) {
	h := newHarness(t)
	h.history(t)
	h.Create(t, &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "greet-invalid"}, Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"}}})
	h.setRunStatus(t, "greet-invalid", v1.TaskRunStatus{Conditions: []metav1.Condition{{
		Type: v1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: string(v1.ReasonInvalidParams),
		Message: "missing values for params with no default: greeting", LastTransitionTime: metav1.NewTime(h.now),
	}}})
	canned := cannedLogs{"prepare": "preparing\n", "say": "hi, world\nbye"}

	tests := map[string]struct {
		args []string
		// logs are the fake step logs; nil reads the Pod logs API.
		logs runlogs.Source
		want result
	}{
		"steps in order, prefixed": {
			args: []string{"logs", "greet-failed"},
			logs: canned,
			want: result{Stdout: "[prepare] preparing\n[say] hi, world\n[say] bye\n"},
		},
		"one step": {
			args: []string{"logs", "greet-failed", "--step", "say", "-f"},
			logs: canned,
			want: result{Stdout: "[say] hi, world\n[say] bye\n"},
		},
		"an unknown step": {
			args: []string{"logs", "greet-failed", "--step", "deploy"},
			logs: canned,
			want: result{Code: 2, Stderr: `error: TaskRun "greet-failed" has no step "deploy"; its steps are: prepare, say; see 'kubectl task logs --help'` + "\n"},
		},
		"a run with no Pod yet, through the Pod logs API": {
			args: []string{"logs", "greet-new"},
			want: result{Stderr: "TaskRun greet-new has not started a step yet; follow it with: kubectl task logs greet-new -f -n NS\n"},
		},
		"a run waiting for its Task, through the Pod logs API": {
			args: []string{"logs", "lost-run"},
			want: result{Stderr: "TaskRun lost-run has not started a step yet; follow it with: kubectl task logs lost-run -f -n NS\n"},
		},
		"a run that ended before its first step": {
			args: []string{"logs", "greet-invalid"},
			want: result{Stderr: "TaskRun greet-invalid ran no step: Failed(InvalidParams); see kubectl task describe greet-invalid -n NS\n"},
		},
		"an unknown run": {
			args: []string{"logs", "nope", "-f"},
			want: result{Code: 1, Stderr: `error: TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS` + "\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h.logs = tc.logs
			defer func() { h.logs = nil }()
			if diff := cmp.Diff(tc.want, h.kubectlTask(t, tc.args...)); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}

// TestLogsFollowWaitsForTheTask follows a run that waits for its Task: logs
// -f waits with it, through the Task's arrival, until the run has a step to
// show or ends.
func TestLogsFollowWaitsForTheTask(t *testing.T) {
	h := newHarness(t)
	h.Create(t, &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "early"}, Spec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "later"}}})
	waiting := func(reason v1.TaskRunReason, status metav1.ConditionStatus) v1.TaskRunStatus {
		return v1.TaskRunStatus{StartTime: &metav1.Time{Time: h.now}, Conditions: []metav1.Condition{{
			Type: v1.ConditionSucceeded, Status: status, Reason: string(reason),
			Message: "waiting for Task \"later\", which does not exist", LastTransitionTime: metav1.NewTime(h.now),
		}}}
	}
	h.setRunStatus(t, "early", waiting(v1.ReasonWaitingForTask, metav1.ConditionUnknown))

	done := h.startAsync(t, "logs", "early", "-f")
	stillWaiting := func(what string) {
		t.Helper()
		select {
		case got := <-done:
			t.Fatalf("logs -f returned %+v %s", got, what)
		case <-time.After(500 * time.Millisecond):
		}
	}
	stillWaiting("while the run waits for its Task")
	h.Create(t, greetTask("later"))
	stillWaiting("once the Task exists, before its first step has started")

	h.setRunStatus(t, "early", waiting(v1.ReasonTimeout, metav1.ConditionFalse))
	want := result{Stderr: "TaskRun early ran no step: Failed(TaskRunTimeout); see kubectl task describe early -n NS\n"}
	if diff := cmp.Diff(want, <-done); diff != "" {
		t.Errorf("logs -f (-want +got):\n%s", diff)
	}
}
