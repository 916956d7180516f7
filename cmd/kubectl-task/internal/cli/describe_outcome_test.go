package cli_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDescribeOutcome checks what describe shows of release 3's run
// semantics: why a run is Pending, its retries and TTL, its results and its
// earlier attempts.
func TestDescribeOutcome(t *testing.T) {
	h := newHarness(t)
	h.outcomeHistory(t)

	// What the Task adds and no run here sets.
	const taskSections = `
Workspaces:
  (none)

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)

Step Env:
  (none)

Step Resources:
  (none set)
`
	tests := map[string]struct {
		run  string
		want string
	}{
		"a run that succeeded on its second attempt, with results and a TTL": {
			run: "digest-retried",
			want: `Name:              digest-retried
Namespace:         NS
Labels:            ---
Task:              digest
Status:            Succeeded
Message:           every step exited 0
Started:           TIME (20m ago)
Completed:         TIME (10m ago)
Duration:          10m
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
Retries:           2, on StepFailed and PodFailed (attempt 2 of 3)
TTL:               1h after it finishes: deleted at TIME (in 50m)
Pod:               digest-retried-pod-retry1
Pod shape:         --- (the Pod no longer exists)

Params:
  NAME       TYPE     VALUE   FROM
  greeting   string   hi      run
  name       string   world   default
` + taskSections + `
Conditions:
  TYPE        STATUS   REASON      LAST TRANSITION   MESSAGE
  Succeeded   True     Succeeded   10m ago           every step exited 0

Steps:
  NAME      STATE   EXIT CODE   REASON   DURATION
  prepare   ---     ---         ---      ---
  say       ---     ---         ---      ---

Results:
  NAME     VALUE
  digest   sha256:` + strings.Repeat("0123456789abcdef", 8)[:93] + `... (135 bytes in all; kubectl get tr -o yaml shows it whole)
  size     ""
  notes    ---

Attempts:
  #   POD                  STARTED   COMPLETED   REASON      MESSAGE
  1   digest-retried-pod   20m ago   15m ago     PodFailed   The node was low on resource: memory.

Events:
  (none)
`,
		},
		"a Pending run says why": {
			run: "digest-pending",
			want: `Name:              digest-pending
Namespace:         NS
Labels:            ---
Task:              digest
Status:            Pending
Why Pending:       Pod "digest-pending-pod" cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.
Started:           TIME (60s ago)
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
Retries:           1, on PodFailed (the default) (attempt 1 of 2)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               digest-pending-pod
Pod shape:         --- (the Pod no longer exists)

Params:
  NAME       TYPE     VALUE   FROM
  greeting   string   hi      run
  name       string   world   default
` + taskSections + `
Conditions:
  TYPE        STATUS    REASON    LAST TRANSITION   MESSAGE
  Succeeded   Unknown   Pending   60s ago           Pod "digest-pending-pod" cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.

Steps:
  NAME      STATE   EXIT CODE   REASON   DURATION
  prepare   ---     ---         ---      ---
  say       ---     ---         ---      ---

Results:
  NAME     VALUE
  digest   ---
  size     ---
  notes    ---

Attempts:
  (none before this one)

Events:
  (none)
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, "describe", tc.run)
			got.Stdout = timestamp.ReplaceAllString(got.Stdout, "TIME")
			if diff := cmp.Diff(result{Stdout: tc.want}, got); diff != "" {
				t.Errorf("kubectl task describe %s (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}

// TestListAttempt checks list's ATTEMPT column, shown when a run may retry.
func TestListAttempt(t *testing.T) {
	h := newHarness(t)
	h.outcomeHistory(t)

	got := h.kubectlTask(t, "list")
	want := result{Stdout: `NAME             TASK     STARTED   DURATION   ATTEMPT   STATUS
digest-pending   digest   60s ago   ---        1/2       Pending
digest-retried   digest   20m ago   10m        2/3       Succeeded
digest-old       digest   3h ago    60s        1/1       Succeeded
`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl task list (-want +got):\n%s", diff)
	}
}
