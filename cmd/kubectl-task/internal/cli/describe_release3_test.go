package cli_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDescribeRunSpec checks what describe shows of release 3's fields: the
// run's labels, its workspaces against the Task's, its Pod settings, and the
// steps' env sources and resources.
func TestDescribeRunSpec(t *testing.T) {
	h := newHarness(t)
	h.release3History(t)

	// The sections that the two runs share: the Task's steps, and what the
	// controller has not yet written.
	const stepsAndStatus = `
Step Env:
  STEP      NAME        FROM
  fetch     REPO        value: https://example.com/app.git
  fetch     GIT_TOKEN   secretKeyRef: git.token
  fetch     GIT_*       configMapRef: git-settings
  compile   GOFLAGS     value: -mod=mod
  compile   NODE        fieldRef: spec.nodeName

Step Resources:
  STEP      REQUESTS                 LIMITS
  compile   cpu=500m, memory=256Mi   memory=1Gi

Conditions:
  (none: the controller has not seen the run yet)

Steps:
  NAME      STATE   EXIT CODE   REASON   DURATION
  fetch     ---     ---         ---      ---
  compile   ---     ---         ---      ---

Results:
  (none)

Events:
  (none)
`
	tests := map[string]struct {
		run  string
		want result
	}{
		"a run that sets every field": {
			run: "build-full",
			want: result{Stdout: `Name:              build-full
Namespace:         NS
Labels:            team=platform
                   tier=nightly
Task:              build
Status:            Pending
Started:           ---
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               ---

Params:
  (none)

Workspaces:
  NAME       SOURCE                     MOUNT PATH               FROM
  source     pvc:build-cache            /workspace/source        run
  settings   configmap:build-settings   /etc/build (read-only)   run
  scratch    emptyDir                   /workspace/scratch       not bound: an emptyDir for the Pod's life
  cache      emptyDir                   ---                      ignored: not declared

Pod Settings:
  Service Account:      builder
  Node Selector:        disktype=ssd, kubernetes.io/arch=amd64
  Tolerations:          2
  Security Context:     runAsNonRoot=true, runAsUser=1000
  Image Pull Secrets:   registry
  Priority Class:       batch-low
` + stepsAndStatus},
		},
		"a run that sets none": {
			run: "build-plain",
			want: result{Stdout: `Name:              build-plain
Namespace:         NS
Labels:            ---
Task:              build
Status:            Pending
Started:           ---
Completed:         ---
Duration:          ---
Timeout:           the controller's default (its --default-timeout, 1h unless set)
Pending timeout:   not set (the controller's --image-pull-timeout and --pod-config-timeout apply)
TTL:               the controller's default (its --default-ttl-after-finished; kept unless set)
Pod:               ---

Params:
  (none)

Workspaces:
  NAME       SOURCE     MOUNT PATH               FROM
  source     emptyDir   /workspace/source        not bound: an emptyDir for the Pod's life
  settings   emptyDir   /etc/build (read-only)   not bound: an emptyDir for the Pod's life
  scratch    emptyDir   /workspace/scratch       not bound: an emptyDir for the Pod's life

Pod Settings:
  Service Account:   --- (none named: the Pod gets no API token)
` + stepsAndStatus},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, "describe", tc.run)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task describe %s (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}
