package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/fixtures"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestDescribePodShape checks that describe says which shape a run's Pod
// got, and why, from Pods as the controller builds them (fixtures.RunPod).
func TestDescribePodShape(t *testing.T) {
	h := newHarness(t)
	// viewer may read runs and Tasks, and nothing else: no Pods.
	h.Grant(t, "viewer", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list"}})

	scripts := greetTask("greet")
	command := greetTask("greet-command")
	command.Spec.Steps[0] = v1.Step{Name: "prepare", Image: "alpine:3", Command: []string{"echo", "preparing"}}
	one := wrappers.Task("", "greet-one").Step("say", "alpine:3", "echo hi").Obj()
	h.Create(t, scripts, command, one)

	// started creates a run of task named name, and, unless podGone, its
	// Pod as the controller builds it, chained if asked.
	started := func(name string, task *v1.Task, chained, podGone bool) {
		t.Helper()
		run := wrappers.TaskRun("", name, task.Name).Param("greeting", "hi").Obj()
		h.Create(t, run)
		h.setRunStatus(t, name, v1.TaskRunStatus{PodName: name + "-pod", StartTime: h.at(-time.Minute)})
		if podGone {
			return
		}
		h.Create(t, fixtures.RunPod(t, run, task, name+"-pod", chained))
	}
	started("chained", scripts, true, false)
	started("fallback", command, true, false)
	started("default", scripts, false, false)
	started("one-step", one, true, false)
	started("pod-gone", scripts, true, true)
	h.Create(t, wrappers.TaskRun("", "no-pod", "greet").Param("greeting", "hi").Obj())

	tests := map[string]struct {
		run, as string
		want    string
	}{
		"chained": {
			run: "chained",
			want: `Pod:               chained-pod
Pod shape:         chained (every step a container that waits for the one before)
`,
		},
		"chained asked for, init containers, and why": {
			run: "fallback",
			want: `Pod:               fallback-pod
Pod shape:         init containers (not chained: step "prepare" runs a command, not a script: its image may have no shell for the wait that chains steps)
`,
		},
		"the default shape: no annotation, as an earlier release's Pod": {
			run: "default",
			want: `Pod:               default-pod
Pod shape:         init containers
`,
		},
		"one step: one container either way": {
			run: "one-step",
			want: `Pod:               one-step-pod
Pod shape:         one container (a run of one step)
`,
		},
		"a Pod that no longer exists": {
			run: "pod-gone",
			want: `Pod:               pod-gone-pod
Pod shape:         --- (the Pod no longer exists)
`,
		},
		"no Pod yet: no shape": {
			run:  "no-pod",
			want: "Pod:               ---\n",
		},
		"for someone who may not read Pods": {
			run: "chained",
			as:  "viewer",
			want: `Pod:               chained-pod
Pod shape:         --- (the Pod cannot be read: pods "chained-pod" is forbidden: User "viewer" cannot get resource "pods" in API group "" in the namespace "NS")
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.describeAs(t, tc.run, tc.as)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("kubectl task describe %s: %+v", tc.run, got)
			}
			var pod strings.Builder
			for _, line := range strings.SplitAfter(got.Stdout, "\n") {
				if strings.HasPrefix(line, "Pod:") || strings.HasPrefix(line, "Pod shape:") {
					pod.WriteString(line)
				}
			}
			if diff := cmp.Diff(tc.want, pod.String()); diff != "" {
				t.Errorf("kubectl task describe %s, its Pod's lines (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}
