//go:build e2e && e2enode

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestNodeStopping runs, on one real node, what stops or outlives a step:
// a timeout, a cancel (with and without a trap), a log followed while the
// step runs, a namespace that enforces the restricted Pod Security level,
// and a controller killed while steps run. Each Task has a step after the
// one stopped, so that its Pod is chained and that step, waiting for its
// turn when the Pod is stopped, must never run.
func TestNodeStopping(t *testing.T) {
	c := newNodeCluster(t, "node-stopping")
	m := startNodeManager(t, c)

	t.Run("timeout-kills-the-step", func(t *testing.T) {
		t.Parallel()
		task := wrappers.Task(ns, "sleeper").Steps(
			v1.Step{Name: "sleep", Image: alpineImage, Script: "echo started; sleep 600"},
			v1.Step{Name: "after", Image: alpineImage, Script: "echo after"}).Obj()
		run := wrappers.TaskRun(ns, "timeout", task.Name).Timeout(10 * time.Second).Obj()
		create(t, c, task, run)
		got := waitFinished(t, c, 2*time.Minute, run.Name)[run.Name]
		wantOutcome(t, got, "False/TaskRunTimeout")
		// The step's process really ended, long before its sleep, and of
		// the SIGTERM the wrapper passed on (143), not of the SIGKILL that
		// ends the grace period (137).
		var ended *corev1.ContainerStateTerminated
		waitFor(t, time.Minute, "the step's container to end", func(ctx context.Context) error {
			s, err := stepStatus(runPod(t, c, got), "sleep")
			if err != nil {
				return err
			}
			if ended = s.State.Terminated; ended == nil {
				return fmt.Errorf("step sleep is %+v", s.State)
			}
			return nil
		})
		if d := ended.FinishedAt.Sub(ended.StartedAt.Time); d > time.Minute || ended.ExitCode != 143 {
			t.Errorf("step sleep ran %s and exited %d (%s), want killed by SIGTERM (143) at its timeout", d, ended.ExitCode, ended.Reason)
		}
		// The shell reports the script it ran as Terminated, as it does
		// for any command a signal ends.
		if log := stepLog(t, c, got, "sleep"); !strings.HasPrefix(log, "started\n") {
			t.Errorf("the timed-out step's log reads %q, want it to start %q", log, "started\n")
		}
		wantNeverRan(t, c, got, "after")
		wantPodShape(t, c, got, runstate.PodShapeChained, "")
	})

	t.Run("cancel-keeps-logs", func(t *testing.T) {
		t.Parallel()
		task := wrappers.Task(ns, "cancellable").Steps(
			v1.Step{Name: "work", Image: alpineImage, Script: "echo before cancel; sleep 600"},
			v1.Step{Name: "after", Image: alpineImage, Script: "echo after"}).Obj()
		run := wrappers.TaskRun(ns, "cancelled", task.Name).Obj()
		create(t, c, task, run)
		waitLogged(t, c, run, "work", "before cancel")
		runPlugin(t, c, "cancel", run.Name)
		got := waitFinished(t, c, time.Minute, run.Name)[run.Name]
		wantOutcome(t, got, "False/TaskRunCancelled")
		if out := runPlugin(t, c, "logs", run.Name); !strings.Contains(out, "before cancel") {
			t.Errorf("kubectl task logs after the cancel printed %q, which lacks %q", out, "before cancel")
		}
		wantNeverRan(t, c, got, "after")
		wantPodShape(t, c, got, runstate.PodShapeChained, "")
	})

	t.Run("cancel-runs-the-trap", func(t *testing.T) {
		t.Parallel()
		// A shell runs a trap once the command in the foreground returns:
		// a script that waits on a background job takes the signal at once.
		// Its trap exits 0, which must not let the step after run.
		task := wrappers.Task(ns, "trapping").Steps(
			v1.Step{Name: "work", Image: alpineImage,
				Script: "trap 'echo trapped TERM; exit 0' TERM\necho waiting\nsleep 600 &\nwait"},
			v1.Step{Name: "after", Image: alpineImage, Script: "echo after"}).Obj()
		run := wrappers.TaskRun(ns, "trapped", task.Name).Obj()
		create(t, c, task, run)
		waitLogged(t, c, run, "work", "waiting")
		runPlugin(t, c, "cancel", run.Name)
		got := waitFinished(t, c, time.Minute, run.Name)[run.Name]
		wantOutcome(t, got, "False/TaskRunCancelled")
		waitLogged(t, c, got, "work", "trapped TERM")
		wantNeverRan(t, c, got, "after")
		wantPodShape(t, c, got, runstate.PodShapeChained, "")
	})

	t.Run("logs-follow-a-running-step", func(t *testing.T) {
		t.Parallel()
		task := wrappers.Task(ns, "ticker").Steps(
			v1.Step{Name: "tick", Image: alpineImage, Script: "for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done"},
			v1.Step{Name: "done", Image: alpineImage, Script: "echo done"}).Obj()
		run := wrappers.TaskRun(ns, "followed", task.Name).Obj()
		create(t, c, task, run)
		lines := followLogs(t, c, run.Name)
		var got []string
		for _, l := range lines {
			got = append(got, l.text)
		}
		want := []string{"[tick] tick 1", "[tick] tick 2", "[tick] tick 3", "[tick] tick 4", "[tick] tick 5", "[tick] tick 6", "[done] done"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("kubectl task logs -f printed %q, want %q", got, want)
		}
		// The lines came as the step wrote them, not all at its end.
		if spread := lines[len(lines)-1].at.Sub(lines[0].at); spread < 3*time.Second {
			t.Errorf("the first and last lines came %s apart: the log was not followed while the step ran", spread)
		}
	})

	t.Run("restricted-namespace", func(t *testing.T) {
		t.Parallel()
		restricted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted",
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
		task := wrappers.Task(restricted.Name, "as-whom").Workspace("w").Steps(
			v1.Step{Name: "write", Image: alpineImage, Script: `id -u; echo written > "$(workspaces.w.path)/f"`},
			v1.Step{Name: "read", Image: alpineImage, Script: `id -u; cat "$(workspaces.w.path)/f"`},
		).Obj()
		run := wrappers.TaskRun(restricted.Name, "alpine-restricted", task.Name).Obj()
		create(t, c, restricted, task, run)
		var got *v1.TaskRun
		waitFor(t, 2*time.Minute, "the restricted run to finish", func(ctx context.Context) error {
			got = &v1.TaskRun{}
			if err := c.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
				return err
			}
			if !runstate.Finished(got) {
				return fmt.Errorf("it is %s: %q", outcome(got), conditionMessage(got))
			}
			return nil
		})
		wantOutcome(t, got, "True/Succeeded")
		if log := stepLog(t, c, got, "read"); log != "65532\nwritten\n" {
			t.Errorf("step read logged %q, want %q: the steps run as 65532 and can write the workspace", log, "65532\nwritten\n")
		}
		wantPodShape(t, c, got, runstate.PodShapeChained, "")
	})

	// Last, once the others have finished: a manager killed while steps
	// run, then started again.
	t.Run("controller-restart", func(t *testing.T) {
		task := wrappers.Task(ns, "long").Steps(
			v1.Step{Name: "first", Image: alpineImage, Script: "echo first; sleep 8"},
			v1.Step{Name: "second", Image: alpineImage, Script: "echo second"}).Obj()
		names := []string{"restart-a", "restart-b", "restart-c"}
		create(t, c, task)
		for _, n := range names {
			create(t, c, wrappers.TaskRun(ns, n, task.Name).Obj())
		}
		waitFor(t, time.Minute, "every run to be running a step", func(ctx context.Context) error {
			all, err := runs(ctx, c)
			if err != nil {
				return err
			}
			for _, n := range names {
				if r := all[n]; r == nil || runstate.Succeeded(r) == nil || runstate.Succeeded(r).Reason != string(v1.ReasonRunning) {
					return fmt.Errorf("TaskRun %s is %s", n, describe(r))
				}
			}
			return nil
		})
		m.kill()
		time.Sleep(3 * time.Second)
		m.start()
		got := waitFinished(t, c, 2*time.Minute, names...)
		pods, err := podsByRun(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			wantOutcome(t, got[n], "True/Succeeded")
			if len(pods[n]) != 1 {
				t.Errorf("TaskRun %s has Pods %v, want exactly one", n, podNames(pods[n]))
			}
			if log := stepLog(t, c, got[n], "second"); log != "second\n" {
				t.Errorf("TaskRun %s: step second logged %q", n, log)
			}
			wantPodShape(t, c, got[n], runstate.PodShapeChained, "")
		}
	})
}

// waitLogged waits until step of run has logged a line holding text.
func waitLogged(t *testing.T, c *cluster, run *v1.TaskRun, step, text string) {
	t.Helper()
	waitFor(t, time.Minute, fmt.Sprintf("step %q of %s to log %q", step, run.Name, text), func(ctx context.Context) error {
		cur := &v1.TaskRun{}
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
			return err
		}
		out, err := c.runKubectl(ctx, "logs", "-n", cur.Namespace, runstate.PodName(cur), "-c", runstate.StepContainer(step))
		if err != nil || !strings.Contains(out, text) {
			return fmt.Errorf("its log: %q (%w)", out, err)
		}
		return nil
	})
}

// followedLine is a line kubectl task logs -f printed, and when.
type followedLine struct {
	text string
	at   time.Time
}

// followLogs runs kubectl task logs -f on run from its start to its end.
func followLogs(t *testing.T, c *cluster, run string) []followedLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.repo, "bin/kubectl-task"), "logs", "-f", run, "-n", ns)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+c.env["KUBECONFIG"])
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []followedLine
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, followedLine{sc.Text(), time.Now()})
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kubectl task logs -f %s: %v\n%s", run, err, stderr.String())
	}
	return lines
}
