//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// What release 7 promises of a step's process, held on a real kubelet and
// container runtime (TestNodeSteps runs these cases with the others).

// stepTimeoutRunsTrap: a step past its timeout gets SIGTERM, and its trap
// runs: the trap's line is in the step's log, its exit code is the step's,
// and the run fails StepTimedOut, naming the step. The step before it ran.
func stepTimeoutRunsTrap() nodeCase {
	task := wrappers.Task(ns, "slow").Steps(
		v1.Step{Name: "first", Image: alpineImage, Script: "echo first"},
		// The shell runs a trap once the command in its foreground ends:
		// sleep in the background, and wait, which the signal ends.
		v1.Step{Name: "slow", Image: alpineImage, Timeout: v1.NewDuration(3 * time.Second),
			Script: "trap 'echo trapped; exit 3' TERM\necho started\nsleep 60 &\nwait $!"},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "step-timeout-trap", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "False/StepTimedOut")
			if msg := conditionMessage(run); !strings.Contains(msg, `step "slow" timed out after 3s`) {
				t.Errorf("the run's message is %q, want it to name the step and its timeout", msg)
			}
			wantSteps := []stepEnd{{"first", 0, "Completed"}, {"slow", 3, v1.StepReasonTimedOut}}
			if diff := cmp.Diff(wantSteps, stepEnds(run)); diff != "" {
				t.Errorf("how the steps ended (-want +got):\n%s", diff)
			}
			if got := stepLog(t, c, run, "slow"); got != "started\ntrapped\n" {
				t.Errorf("the timed-out step logged %q, want its trap's line after its own", got)
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// addedCapabilities: a step whose securityContext drops every capability
// but adds CHOWN may chown a file; a step that only drops them may not.
// Both run as the image's root, so that the capability alone decides.
func addedCapabilities() nodeCase {
	chown := `touch /tmp/f && chown 1234 /tmp/f && stat -c %u /tmp/f || { echo denied; exit 4; }`
	task := wrappers.Task(ns, "capabilities").Steps(
		v1.Step{Name: "allowed", Image: alpineImage, Script: chown,
			SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{
				Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"CHOWN"}}}},
		v1.Step{Name: "denied", Image: alpineImage, Script: chown, OnError: v1.OnErrorContinue,
			SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{
				Drop: []corev1.Capability{"ALL"}}}},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "added-capabilities", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			wantSteps := []stepEnd{{"allowed", 0, "Completed"}, {"denied", 4, v1.StepReasonContinued}}
			if diff := cmp.Diff(wantSteps, stepEnds(run)); diff != "" {
				t.Errorf("how the steps ended (-want +got):\n%s", diff)
			}
			if got := stepLog(t, c, run, "allowed"); got != "1234\n" {
				t.Errorf("the step with CHOWN logged %q, want the file's new owner, 1234", got)
			}
			if got := stepLog(t, c, run, "denied"); !strings.Contains(got, "Operation not permitted") || !strings.Contains(got, "denied\n") {
				t.Errorf("the step without CHOWN logged %q, want it denied", got)
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// editedTaskKeepsRetry: a run's first attempt fails; while it runs, its
// Task is edited to do something else. The retry runs the spec the run
// pinned at its first Pod (status.taskSpec), not the edited Task.
func editedTaskKeepsRetry(hostDir string) nodeCase {
	pv, pvc := hostPathClaim("pinned-state", filepath.Join(hostDir, "pinned"))
	task := wrappers.Task(ns, "pinned-flaky").Workspace("state").Steps(
		v1.Step{Name: "try", Image: alpineImage, Script: `m="$(workspaces.state.path)/tried"
if [ -f "$m" ]; then echo second attempt, pinned spec; exit 0; fi
touch "$m"; echo first attempt; sleep 5; exit 1`},
	).Obj()
	run := retriedOnce("edited-task-keeps-retry", task, pvc)
	return nodeCase{
		before: []client.Object{pv, pvc, task},
		run:    run,
		during: func(t *testing.T, c *cluster) {
			waitFor(t, time.Minute, "the first attempt's spec to be pinned", func(ctx context.Context) error {
				got := &v1.TaskRun{}
				if err := c.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				if got.Status.TaskSpec == nil {
					return fmt.Errorf("status.taskSpec not set; %s", describe(got))
				}
				return nil
			})
			edited := &v1.Task{}
			if err := c.client.Get(context.Background(), client.ObjectKeyFromObject(task), edited); err != nil {
				t.Fatal(err)
			}
			edited.Spec.Steps[0].Script = "echo edited Task; exit 9"
			if err := c.client.Update(context.Background(), edited); err != nil {
				t.Fatalf("editing Task %s mid-run: %v", task.Name, err)
			}
		},
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if len(run.Status.Attempts) != 1 {
				t.Fatalf("status.attempts: %+v, want the one failed attempt", run.Status.Attempts)
			}
			if got := stepLog(t, c, run, "try"); got != "second attempt, pinned spec\n" {
				t.Errorf("the retry logged %q, want the pinned spec's second attempt", got)
			}
		},
	}
}

// sidecarOnLoopback: a step talks to a service its sidecar serves on the
// Pod's loopback (busybox's httpd), which a readiness probe says is up;
// the sidecar is still running when the step ends, and the run ends with
// the step all the same.
func sidecarOnLoopback() nodeCase {
	task := wrappers.Task(ns, "with-server").Steps(
		v1.Step{Name: "get", Image: alpineImage, Script: "wget -qO- http://127.0.0.1:8080/"},
	).Obj()
	task.Spec.Sidecars = []v1.Sidecar{{Name: "web", Image: alpineImage,
		Script:         "mkdir -p /tmp/www && echo served by the sidecar > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /tmp/www",
		ReadinessProbe: shellProbe("wget -qO /dev/null http://127.0.0.1:8080/")}}
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "sidecar-on-loopback", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got := stepLog(t, c, run, "get"); got != "served by the sidecar\n" {
				t.Errorf("the step fetched %q from its sidecar, want its page", got)
			}
			// waitFinished reads v1beta1, which has no status.sidecars.
			v1Run := &v1.TaskRun{}
			if err := c.client.Get(context.Background(), client.ObjectKeyFromObject(run), v1Run); err != nil {
				t.Fatal(err)
			}
			if len(v1Run.Status.Sidecars) != 1 || v1Run.Status.Sidecars[0].Name != "web" {
				t.Errorf("status.sidecars: %+v, want web's", v1Run.Status.Sidecars)
			}
		},
	}
}

// slowSidecarHoldsFirstStep: a sidecar that becomes ready only 3 s after it
// starts holds step 1 until then: the step finds the file the sidecar
// writes as it becomes ready, in a workspace they share.
func slowSidecarHoldsFirstStep() nodeCase {
	task := wrappers.Task(ns, "slow-sidecar").Workspace("shared").Steps(
		v1.Step{Name: "first", Image: alpineImage, Script: `cat "$(workspaces.shared.path)/ready"`},
	).Obj()
	task.Spec.Sidecars = []v1.Sidecar{{Name: "slow", Image: alpineImage,
		Script:         `sleep 3; echo ready after 3s > "$(workspaces.shared.path)/ready"; exec sleep 3600`,
		ReadinessProbe: shellProbe("test -f /workspace/shared/ready")}}
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "slow-sidecar-holds-step", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got := stepLog(t, c, run, "first"); got != "ready after 3s\n" {
				t.Errorf("step 1 read %q, want what the sidecar wrote as it became ready: it started before", got)
			}
		},
	}
}

// sidecarIgnoringTermDoesNotDelayEnd: a sidecar that ignores SIGTERM does
// not keep the run from ending with its last step: the run's completion
// is within a few seconds of the step's end (the Pod's grace period is
// 30 s), and the Pod is stopped.
func sidecarIgnoringTermDoesNotDelayEnd() nodeCase {
	task := wrappers.Task(ns, "stubborn-sidecar").Steps(
		v1.Step{Name: "work", Image: alpineImage, Script: "echo done"},
		v1.Step{Name: "more", Image: alpineImage, Script: "echo more"},
	).Obj()
	task.Spec.Sidecars = []v1.Sidecar{stubbornSidecar("stubborn")}
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "stubborn-sidecar", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			last := run.Status.Steps[len(run.Status.Steps)-1]
			if last.FinishedAt == nil || run.Status.CompletionTime == nil {
				t.Fatalf("the last step's end %v, the run's completion %v: want both", last.FinishedAt, run.Status.CompletionTime)
			}
			if d := run.Status.CompletionTime.Sub(last.FinishedAt.Time); d > 2*time.Second {
				t.Errorf("the run completed %v after its last step ended, want at once: the sidecar that ignores SIGTERM held it", d)
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// stubbornSidecar is a sidecar that ignores SIGTERM, which only the end of
// its grace period, or its Pod's deadline, stops (BenchmarkNodeSidecarCost
// times one too).
func stubbornSidecar(name string) v1.Sidecar {
	return v1.Sidecar{Name: name, Image: alpineImage, Script: "trap '' TERM\nwhile :; do sleep 1; done"}
}

// shellProbe is a probe that runs script in the container's shell every
// second.
func shellProbe(script string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}, PeriodSeconds: 1}
}
