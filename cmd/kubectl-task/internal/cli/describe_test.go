package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

// timestamp matches the absolute times describe shows, which the test cannot
// know in advance; the relative ones come from the test's clock.
var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// failedRunButEvents is what describe shows of greet-failed up to its Events.
const failedRunButEvents = `Name:              greet-failed
Namespace:         NS
Labels:            ---
Task:              greet
Status:            Failed(StepFailed)
Message:           step "say" exited with code 3
Started:           TIME (60m ago)
Completed:         TIME (59m ago)
Duration:          12s
Timeout:           10m0s
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               greet-failed-pod
Pod shape:         --- (the Pod no longer exists)

Params:
  NAME       TYPE     VALUE   FROM
  greeting   string   hi      run
  name       string   world   default

Workspaces:
  (none)

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)

Step Env:
  (none)

Step Resources:
  (none set)

Conditions:
  TYPE        STATUS   REASON       LAST TRANSITION   MESSAGE
  Succeeded   False    StepFailed   59m ago           step "say" exited with code 3

Steps:
  NAME      STATE        EXIT CODE   REASON      DURATION
  prepare   Terminated   0           Completed   3s
  say       Terminated   3           Error       7s

Results:
  (none)

Events:
`

// describeAs runs kubectl task describe run, as the user as impersonates
// if set.
func (h *harness) describeAs(t *testing.T, run, as string) result {
	t.Helper()
	args := []string{"describe", run}
	if as != "" {
		args = append(args, "--as", as)
	}
	return h.kubectlTask(t, args...)
}

func TestDescribe(t *testing.T) {
	h := newHarness(t)
	h.history(t)

	// viewer may read runs and Tasks, and nothing else: no Events.
	h.Grant(t, "viewer", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list"}})

	tests := map[string]struct {
		run string
		// as, if set, is the user the command impersonates.
		as   string
		want result
	}{
		"a failed run, with its Events and its Pod's": {
			run: "greet-failed",
			want: result{Stdout: failedRunButEvents + `  TYPE      REASON    AGE        OBJECT                 MESSAGE
  Normal    Started   60m        TaskRun/greet-failed   created Pod greet-failed-pod
  Normal    Pulled    59m (x2)   Pod/greet-failed-pod   Container image "alpine:3" already present on machine
  Warning   Failed    59m        TaskRun/greet-failed   step "say" exited with code 3
`},
		},
		"a failed run, for someone who may not list Events or read Pods": {
			run: "greet-failed",
			as:  "viewer",
			want: result{Stdout: strings.Replace(failedRunButEvents, "--- (the Pod no longer exists)",
				`--- (the Pod cannot be read: pods "greet-failed-pod" is forbidden: User "viewer" cannot get resource "pods" in API group "" in the namespace "NS")`, 1) +
				`  (cannot be listed: events is forbidden: User "viewer" cannot list resource "events" in API group "" in the namespace "NS")
`},
		},
		"a running run": {
			run: "greet-running",
			want: result{Stdout: `Name:              greet-running
Namespace:         NS
Labels:            ---
Task:              greet
Status:            Running
Message:           running step "say" (2 of 2)
Started:           TIME (30s ago)
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               greet-running-pod
Pod shape:         --- (the Pod no longer exists)

Params:
  NAME       TYPE     VALUE   FROM
  greeting   string   hey     run
  name       string   world   default

Workspaces:
  (none)

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)

Step Env:
  (none)

Step Resources:
  (none set)

Conditions:
  TYPE        STATUS    REASON    LAST TRANSITION   MESSAGE
  Succeeded   Unknown   Running   25s ago           running step "say" (2 of 2)

Steps:
  NAME      STATE        EXIT CODE   REASON      DURATION
  prepare   Terminated   0           Completed   5s
  say       Running      ---         ---         20s so far

Results:
  (none)

Events:
  (none)
`},
		},
		"a run the controller has not seen": {
			run: "greet-new",
			want: result{Stdout: `Name:              greet-new
Namespace:         NS
Labels:            ---
Task:              greet
Status:            Pending
Started:           ---
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               ---

Params:
  NAME       TYPE     VALUE   FROM
  greeting   string   yo      run
  name       string   world   default

Workspaces:
  (none)

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)

Step Env:
  (none)

Step Resources:
  (none set)

Conditions:
  (none: the controller has not seen the run yet)

Steps:
  NAME      STATE   EXIT CODE   REASON   DURATION
  prepare   ---     ---         ---      ---
  say       ---     ---         ---      ---

Results:
  (none)

Events:
  (none)
`},
		},
		"a run whose Task does not exist": {
			run: "lost-run",
			want: result{Stdout: `Name:              lost-run
Namespace:         NS
Labels:            ---
Task:              gone
Status:            WaitingForTask
Message:           waiting for Task "gone", which does not exist
Started:           TIME (5m ago)
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               ---

Params:
  (Task "gone" does not exist: the run's own values only)
  (none)

Workspaces:
  (none)

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)

Step Env:
  (Task "gone" does not exist)

Step Resources:
  (Task "gone" does not exist)

Conditions:
  TYPE        STATUS    REASON           LAST TRANSITION   MESSAGE
  Succeeded   Unknown   WaitingForTask   5m ago            waiting for Task "gone", which does not exist

Steps:
  (none reported yet)

Results:
  (none)

Events:
  (none)
`},
		},
		"an unknown run": {
			run:  "nope",
			want: result{Code: 1, Stderr: `error: TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS` + "\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.describeAs(t, tc.run, tc.as)
			got.Stdout = timestamp.ReplaceAllString(got.Stdout, "TIME")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task describe %s (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}
