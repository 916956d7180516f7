//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// podConfigTimeout is the manager's --pod-config-timeout in these tests:
// long enough for a ConfigMap created late, short enough to wait out.
const podConfigTimeout = 20 * time.Second

// nodeCase is one run on the real node: the objects it needs, the run, and
// what must have happened in its containers once it has finished.
type nodeCase struct {
	// before are created first: ConfigMaps, Secrets, volumes, the Task.
	before []client.Object
	run    *v1.TaskRun
	// during, if set, runs while the run goes on (it may wait for it).
	during func(t *testing.T, c *cluster)
	check  func(t *testing.T, c *cluster, run *v1.TaskRun)
	// shape is the Pod's shape annotation when the manager asks for
	// chained Pods: chained, init-containers (a fallback, its reason
	// holding why), or none for a Task of one step.
	shape, why string
}

// TestNodeSteps runs, on one real node and all at once, runs whose steps
// hand files, results and exit codes on, fail, run without a shell, bind
// every kind of workspace, get a token or none, run as their images' users,
// and run out of memory; and what release 7 runs: a step timed out (its
// trap runs), a step's added capabilities, a retry of a pinned spec whose
// Task was edited, sidecars (a service on loopback, one slow to be ready,
// one that ignores SIGTERM); their Pods chained where the Task allows.
func TestNodeSteps(t *testing.T) {
	c := newNodeCluster(t, "node-steps")
	startNodeManager(t, c, "--pod-config-timeout="+podConfigTimeout.String())
	hostDir := t.TempDir()
	// The kubelet writes here as the Pod's user; the restricted run's is 65532.
	if err := os.Chmod(hostDir, 0o777); err != nil {
		t.Fatal(err)
	}

	cases := map[string]nodeCase{
		"order-and-workspace":          orderAndWorkspace(),
		"first-failure-stops":          firstFailureStops(),
		"results-and-onerror":          resultsAndOnError(),
		"shell-less-command":           shellLessCommand(),
		"script-without-shell":         scriptWithoutShell(),
		"script-without-shell-chained": scriptWithoutShellAfterAStep(),
		"oom":                          outOfMemory(),
		"oom-among-steps":              outOfMemoryAmongSteps(),
		"images-users":                 imagesUsers(),
		"volume-workspaces":            volumeWorkspaces(hostDir),
		"token-when-named":             serviceAccountToken("token-when-named", true),
		"no-token-by-default":          serviceAccountToken("no-token-by-default", false),
		"late-configmap":               lateConfigMap(),
		"missing-configmap":            missingConfigMap(),
		"retry-real-failure":           retryAfterRealFailure(hostDir),
		"step-timeout-trap":            stepTimeoutRunsTrap(),
		"added-capabilities":           addedCapabilities(),
		"edited-task-keeps-retry":      editedTaskKeepsRetry(hostDir),
		"sidecar-on-loopback":          sidecarOnLoopback(),
		"slow-sidecar-holds-step":      slowSidecarHoldsFirstStep(),
		"stubborn-sidecar":             sidecarIgnoringTermDoesNotDelayEnd(),
	}
	runNodeCases(t, c, cases, true)
	t.Run("samples", func(t *testing.T) {
		t.Parallel()
		checkSamples(t, c)
	})
}

// TestNodeInitContainers runs, on a real node whose manager builds init
// containers (--pod-shape=init-containers, release 6's default), the cases
// of TestNodeSteps whose Tasks have many steps: that shape stays proven on
// a real kubelet while the other tests prove the chained one, the default.
func TestNodeInitContainers(t *testing.T) {
	c := newNodeCluster(t, "node-init-containers")
	startManager(t, c, initContainersShape)
	cases := map[string]nodeCase{
		"order-and-workspace":          orderAndWorkspace(),
		"first-failure-stops":          firstFailureStops(),
		"results-and-onerror":          resultsAndOnError(),
		"shell-less-command":           shellLessCommand(),
		"script-without-shell-chained": scriptWithoutShellAfterAStep(),
		"oom-among-steps":              outOfMemoryAmongSteps(),
		"images-users":                 imagesUsers(),
	}
	runNodeCases(t, c, cases, false)
}

// runNodeCases runs cases on c all at once, and checks each once its run
// has finished; chained says that the manager asks for chained Pods, whose
// shapes the cases name.
func runNodeCases(t *testing.T, c *cluster, cases map[string]nodeCase, chained bool) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			create(t, c, tc.before...)
			create(t, c, tc.run)
			if tc.during != nil {
				tc.during(t, c)
			}
			run := waitFinished(t, c, 3*time.Minute, tc.run.Name)[tc.run.Name]
			tc.check(t, c, run)
			if chained {
				wantPodShape(t, c, run, tc.shape, tc.why)
			} else {
				wantPodShape(t, c, run, "", "")
			}
		})
	}
}

// orderAndWorkspace: three steps append to one file in a workspace the run
// does not bind (an emptyDir); the last prints it. The steps ran in order,
// each after the one before had finished, and the file was handed on.
func orderAndWorkspace() nodeCase {
	task := wrappers.Task(ns, "order").Workspace("shared").Steps(
		v1.Step{Name: "one", Image: alpineImage, Script: `echo one >> "$(workspaces.shared.path)/order"`},
		v1.Step{Name: "two", Image: alpineImage, Script: `sleep 1; echo two >> "$(workspaces.shared.path)/order"`},
		v1.Step{Name: "three", Image: alpineImage, Script: `echo three >> "$(workspaces.shared.path)/order"; cat "$(workspaces.shared.path)/order"`},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "order-and-workspace", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got, want := stepLog(t, c, run, "three"), "one\ntwo\nthree\n"; got != want {
				t.Errorf("the file the steps appended to reads %q, want %q", got, want)
			}
			// Each step started after the one before had finished, as
			// status.steps says: when each step's command began and ended.
			var prevEnd time.Time
			for _, s := range run.Status.Steps {
				if s.State != v1.StepTerminated || s.StartedAt == nil || s.FinishedAt == nil {
					t.Fatalf("step %q did not end: %+v", s.Name, s)
				}
				if s.StartedAt.Time.Before(prevEnd) {
					t.Errorf("step %q started at %s, before the step before it ended (%s)", s.Name, s.StartedAt, prevEnd)
				}
				prevEnd = s.FinishedAt.Time
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// firstFailureStops: the second of three steps exits 7; the third never runs.
func firstFailureStops() nodeCase {
	task := wrappers.Task(ns, "stops").Steps(
		v1.Step{Name: "before", Image: alpineImage, Script: "echo before"},
		v1.Step{Name: "fails", Image: alpineImage, Script: "echo failing; exit 7"},
		v1.Step{Name: "after", Image: alpineImage, Script: "echo after"},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "first-failure-stops", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "False/StepFailed")
			wantMessage(t, run, `step "fails" exited with code 7`)
			if got := stepLog(t, c, run, "fails"); got != "failing\n" {
				t.Errorf("step fails logged %q, want %q", got, "failing\n")
			}
			if ended := wantNeverRan(t, c, run, "after"); ended != nil {
				// Chained, its container ran the wrapper alone, which
				// wrote that it skipped the step.
				if ended.Message != runstate.SkippedMessage || ended.ExitCode != 0 {
					t.Errorf("step after's container ended %+v, want it to say it skipped the step", ended)
				}
			} else {
				s, err := stepStatus(runPod(t, c, run), "after")
				if err != nil {
					t.Fatal(err)
				}
				if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
					t.Errorf("step after ran after step fails had failed: %+v", s.State)
				}
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// resultsAndOnError: a step writes results and another exits 3 under
// onError: continue; the run succeeds with the results and the code.
func resultsAndOnError() nodeCase {
	task := wrappers.Task(ns, "results").Results("digest", "summary").Steps(
		v1.Step{Name: "build", Image: alpineImage,
			Script: `printf 'sha256:0123' > "$(results.digest.path)"; printf 'first' > "$(results.summary.path)"`},
		v1.Step{Name: "lint", Image: alpineImage, OnError: v1.OnErrorContinue, Script: "echo linting; exit 3"},
		v1.Step{Name: "report", Image: alpineImage, Script: `printf '3 warnings\nand a "quote"' > "$(results.summary.path)"; exit 42`},
	).Obj()
	task.Spec.Steps[2].OnError = v1.OnErrorContinue
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "results-and-onerror", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			want := []v1.RunResult{
				{Name: "digest", Value: ptr.To("sha256:0123")},
				{Name: "summary", Value: ptr.To("3 warnings\nand a \"quote\"")},
			}
			if diff := cmp.Diff(want, run.Status.Results); diff != "" {
				t.Errorf("status.results (-want +got):\n%s", diff)
			}
			wantSteps := []stepEnd{{"build", 0, "Completed"}, {"lint", 3, v1.StepReasonContinued}, {"report", 42, v1.StepReasonContinued}}
			if diff := cmp.Diff(wantSteps, stepEnds(run)); diff != "" {
				t.Errorf("how the steps ended (-want +got):\n%s", diff)
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// shellLessCommand: command steps in an image with no shell at all.
func shellLessCommand() nodeCase {
	task := wrappers.Task(ns, "no-shell-commands").Workspace("w").Steps(
		v1.Step{Name: "write", Image: noShellImage,
			Command: []string{"/steptool", "write", "$(workspaces.w.path)/note", "written without a shell"}},
		v1.Step{Name: "read", Image: noShellImage, Command: []string{"/steptool"},
			Args: []string{"cat", "$(workspaces.w.path)/note"}},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "shell-less-command", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got, want := stepLog(t, c, run, "read"), "written without a shell\n"; got != want {
				t.Errorf("step read logged %q, want %q", got, want)
			}
		},
		// Command steps may have no shell for the wait: init containers.
		shape: runstate.PodShapeInitContainers, why: `step "write" runs a command, not a script`,
	}
}

// scriptWithoutShellAfterAStep: a script step in an image with no /bin/sh,
// after a step that runs for seconds, fails saying so, and the step after
// it never runs. A chained Pod's containers all start at once, so the
// kubelet fails to start it while the step before still runs: the run fails
// at once, and stops that step.
func scriptWithoutShellAfterAStep() nodeCase {
	task := wrappers.Task(ns, "script-no-shell-second").Steps(
		v1.Step{Name: "first", Image: alpineImage, Script: "echo first; sleep 5"},
		v1.Step{Name: "script", Image: noShellImage, Script: "echo never"},
		v1.Step{Name: "after", Image: alpineImage, Script: "echo after"},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "script-without-shell-second", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantNoShell(t, run)
			wantNeverRan(t, c, run, "after")
		},
		shape: runstate.PodShapeChained,
	}
}

// scriptWithoutShell: a script step in an image with no /bin/sh fails at
// once, saying so.
func scriptWithoutShell() nodeCase {
	task := wrappers.Task(ns, "script-no-shell").Steps(
		v1.Step{Name: "script", Image: noShellImage, Script: "echo never"},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "script-without-shell", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantNoShell(t, run)
		},
	}
}

// wantNoShell fails the test unless run failed at once, its message naming
// step "script" and saying that its image has no shell.
func wantNoShell(t *testing.T, run *v1.TaskRun) {
	t.Helper()
	wantOutcome(t, run, "False/StepFailed")
	if msg := conditionMessage(run); !strings.Contains(msg, `step "script"`) || !strings.Contains(msg, "no shell") {
		t.Errorf("the message is %q; want one that names step \"script\" and says its image has no shell", msg)
	}
	if d := finishedIn(run); d > 30*time.Second {
		t.Errorf("the run took %s to fail; a step that cannot start fails at once", d)
	}
}

// outOfMemory: a step that touches more memory than its limit is killed
// by the kernel, and the run says so.
func outOfMemory() nodeCase {
	task := wrappers.Task(ns, "oom").Steps(
		v1.Step{Name: "hog", Image: noShellImage, Command: []string{"/steptool", "alloc", "512"},
			ComputeResources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "oom", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "False/StepFailed")
			if msg := conditionMessage(run); !strings.Contains(msg, "OOMKilled") {
				t.Errorf("the message is %q; want one naming OOMKilled", msg)
			}
			if got := stepEnds(run); len(got) != 1 || got[0].Reason != "OOMKilled" {
				t.Errorf("status.steps: %+v, want step hog ended OOMKilled", got)
			}
		},
	}
}

// outOfMemoryAmongSteps: the second of three script steps, each with a
// memory limit, touches more memory than its limit (busybox's dd reads into
// a buffer of its block size), and the kernel kills it; the run says so and
// the step after never runs. Chained, the Pod requests the largest step's
// memory once, and each container keeps its limit.
func outOfMemoryAmongSteps() nodeCase {
	limit := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	task := wrappers.Task(ns, "oom-among-steps").Steps(
		v1.Step{Name: "small", Image: alpineImage, ComputeResources: limit, Script: "dd if=/dev/zero of=/dev/null bs=8M count=1"},
		v1.Step{Name: "hog", Image: alpineImage, ComputeResources: limit, Script: "echo hogging; dd if=/dev/zero of=/dev/null bs=512M count=1"},
		v1.Step{Name: "after", Image: alpineImage, ComputeResources: limit, Script: "echo after"},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "oom-among-steps", task.Name).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "False/StepFailed")
			if msg := conditionMessage(run); !strings.Contains(msg, `step "hog"`) || !strings.Contains(msg, "OOMKilled") {
				t.Errorf("the message is %q; want one naming step \"hog\" and OOMKilled", msg)
			}
			want := []stepEnd{{"small", 0, "Completed"}, {"hog", 137, "OOMKilled"}}
			if diff := cmp.Diff(want, stepEnds(run)[:2]); diff != "" {
				t.Errorf("how the steps ended (-want +got):\n%s", diff)
			}
			wantNeverRan(t, c, run, "after")
			pod := runPod(t, c, run)
			for _, ctr := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
				if got := ctr.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("64Mi")) != 0 {
					t.Errorf("container %s's memory limit is %s, want its step's 64Mi", ctr.Name, &got)
				}
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// imagesUsers: steps whose images name different users (root, then
// nonroot, then root) hand files and their turns on to each other: the Pod
// sets no user, so each container runs as its image's.
func imagesUsers() nodeCase {
	task := wrappers.Task(ns, "images-users").Workspace("w").Steps(
		v1.Step{Name: "root", Image: alpineImage, Script: `id -u; echo from root > "$(workspaces.w.path)/note"; chmod 666 "$(workspaces.w.path)/note"; chmod 777 "$(workspaces.w.path)"`},
		v1.Step{Name: "nonroot", Image: nonRootImage, Script: `id -u; cat "$(workspaces.w.path)/note"; echo from nonroot >> "$(workspaces.w.path)/note"`},
		v1.Step{Name: "root-again", Image: alpineImage, Script: `id -u; cat "$(workspaces.w.path)/note"`},
	).Obj()
	return nodeCase{
		before: []client.Object{task},
		run:    wrappers.TaskRun(ns, "images-users", task.Name).Timeout(time.Minute).Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			for step, want := range map[string]string{
				"root":       "0\n",
				"nonroot":    "65532\nfrom root\n",
				"root-again": "0\nfrom root\nfrom nonroot\n",
			} {
				if got := stepLog(t, c, run, step); got != want {
					t.Errorf("step %s logged %q, want %q", step, got, want)
				}
			}
		},
		shape: runstate.PodShapeChained,
	}
}

// volumeWorkspaces: a ConfigMap, a Secret and a claim on a static hostPath
// volume, bound by the run: the step reads the first two and writes into the
// third, where the test finds the file on this machine.
func volumeWorkspaces(hostDir string) nodeCase {
	dir := filepath.Join(hostDir, "claim")
	pv, pvc := hostPathClaim("output", dir)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}, Data: map[string]string{"greeting": "hello from a ConfigMap"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "credentials", Namespace: ns}, StringData: map[string]string{"token": "s3cr3t"}}
	task := wrappers.Task(ns, "volumes").Workspace("settings").Workspace("credentials").Workspace("output").Steps(
		v1.Step{Name: "use", Image: alpineImage, Script: `set -e
cat "$(workspaces.settings.path)/greeting" > "$(workspaces.output.path)/greeting"
echo >> "$(workspaces.output.path)/greeting"
wc -c < "$(workspaces.credentials.path)/token" > "$(workspaces.output.path)/token-length"
echo done`},
	).Obj()
	run := wrappers.TaskRun(ns, "volume-workspaces", task.Name).
		Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}).
		Workspace(v1.WorkspaceBinding{Name: "credentials", Secret: &corev1.SecretVolumeSource{SecretName: secret.Name}}).
		Workspace(v1.WorkspaceBinding{Name: "output", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}).
		Obj()
	return nodeCase{
		before: []client.Object{pv, pvc, cm, secret, task},
		run:    run,
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			for file, want := range map[string]string{"greeting": "hello from a ConfigMap\n", "token-length": "6\n"} {
				got, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil || strings.TrimLeft(string(got), " ") != want {
					t.Errorf("the claim's %s on this machine: %q (%v), want %q", file, got, err, want)
				}
			}
		},
	}
}

// serviceAccountToken: the Pod gets a token only when the run names a
// ServiceAccount.
func serviceAccountToken(name string, named bool) nodeCase {
	task := wrappers.Task(ns, name).Steps(
		v1.Step{Name: "look", Image: alpineImage,
			Script: `if [ -f /var/run/secrets/kubernetes.io/serviceaccount/token ]; then echo token; else echo none; fi`},
	).Obj()
	run := wrappers.TaskRun(ns, name, task.Name)
	before := []client.Object{task}
	want := "none\n"
	if named {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder-" + name, Namespace: ns}}
		before = append([]client.Object{sa}, before...)
		run = run.ServiceAccount(sa.Name)
		want = "token\n"
	}
	return nodeCase{
		before: before,
		run:    run.Obj(),
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got := stepLog(t, c, run, "look"); got != want {
				t.Errorf("the step saw %q where a token would be, want %q", got, want)
			}
		},
	}
}

// lateConfigMap: the run binds a ConfigMap that does not exist yet. The
// Pending message says why the step cannot start; once it is created, in
// time, the run goes on and succeeds.
func lateConfigMap() nodeCase {
	task, run := configMapRun("late-configmap", "late")
	return nodeCase{
		before: []client.Object{task},
		run:    run,
		during: func(t *testing.T, c *cluster) {
			waitFor(t, podConfigTimeout, "the Pending message to name the missing ConfigMap", func(ctx context.Context) error {
				got := &v1.TaskRun{}
				if err := c.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				if msg := conditionMessage(got); !strings.Contains(msg, `"late"`) {
					return fmt.Errorf("the run is %s: %q", outcome(got), msg)
				}
				return nil
			})
			create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns}, Data: map[string]string{"value": "arrived late"}})
		},
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if got := stepLog(t, c, run, "read"); got != "arrived late" {
				t.Errorf("step read logged %q, want %q", got, "arrived late")
			}
		},
	}
}

// missingConfigMap: a ConfigMap that never comes ends the run
// PodConfigFailed after --pod-config-timeout, naming it.
func missingConfigMap() nodeCase {
	task, run := configMapRun("missing-configmap", "never")
	return nodeCase{
		before: []client.Object{task},
		run:    run,
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "False/PodConfigFailed")
			if msg := conditionMessage(run); !strings.Contains(msg, `"never"`) {
				t.Errorf("the message is %q; want one naming ConfigMap \"never\"", msg)
			}
			if d := finishedIn(run); d < podConfigTimeout {
				t.Errorf("the run failed after %s, before --pod-config-timeout (%s)", d, podConfigTimeout)
			}
		},
	}
}

// configMapRun is a run named name whose one step prints the key value of
// the ConfigMap configMap, bound as a workspace, and its Task.
func configMapRun(name, configMap string) (*v1.Task, *v1.TaskRun) {
	task := wrappers.Task(ns, name).Workspace("config").Steps(
		v1.Step{Name: "read", Image: alpineImage, Script: `cat "$(workspaces.config.path)/value"`},
	).Obj()
	run := wrappers.TaskRun(ns, name, task.Name).
		Workspace(v1.WorkspaceBinding{Name: "config", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}).
		Obj()
	return task, run
}

// retryAfterRealFailure: the first attempt's step really fails (it leaves a
// mark in a hostPath claim and exits 1); the second finds the mark and
// succeeds.
func retryAfterRealFailure(hostDir string) nodeCase {
	pv, pvc := hostPathClaim("retry-state", filepath.Join(hostDir, "retry"))
	task := wrappers.Task(ns, "flaky-once").Workspace("state").Steps(
		v1.Step{Name: "try", Image: alpineImage, Script: `m="$(workspaces.state.path)/tried"
if [ -f "$m" ]; then echo second attempt; exit 0; fi
touch "$m"; echo first attempt; exit 1`},
	).Obj()
	run := retriedOnce("retry-real-failure", task, pvc)
	return nodeCase{
		before: []client.Object{pv, pvc, task},
		run:    run,
		check: func(t *testing.T, c *cluster, run *v1.TaskRun) {
			wantOutcome(t, run, "True/Succeeded")
			if len(run.Status.Attempts) != 1 {
				t.Fatalf("status.attempts: %+v, want the one failed attempt", run.Status.Attempts)
			}
			first := run.DeepCopy()
			first.Status.PodName = run.Status.Attempts[0].PodName
			if got := stepLog(t, c, first, "try"); got != "first attempt\n" {
				t.Errorf("the first attempt's Pod logged %q, want %q (its Pod is kept)", got, "first attempt\n")
			}
			if got := stepLog(t, c, run, "try"); got != "second attempt\n" {
				t.Errorf("the second attempt logged %q, want %q", got, "second attempt\n")
			}
		},
	}
}

// retriedOnce is a run named name of task, retried once if a step fails,
// its workspace "state" bound to the claim pvc: where a flaky step keeps
// what it tried.
func retriedOnce(name string, task *v1.Task, pvc *corev1.PersistentVolumeClaim) *v1.TaskRun {
	run := wrappers.TaskRun(ns, name, task.Name).
		Workspace(v1.WorkspaceBinding{Name: "state", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}).
		Obj()
	run.Spec.Retries = ptr.To[int32](1)
	run.Spec.RetryOn = []v1.RetryReason{v1.RetryOnStepFailed}
	return run
}

// hostPathClaim is a claim named name in ns, bound to a static volume of
// its own: the directory dir on this machine, which the node's Pods share
// with the test.
func hostPathClaim(name, dir string) (*corev1.PersistentVolume, *corev1.PersistentVolumeClaim) {
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "node-steps-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: size, AccessModes: rwo,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: rwo, StorageClassName: ptr.To(""), VolumeName: pv.Name,
			Resources: corev1.VolumeResourceRequirements{Requests: size},
		},
	}
	return pv, pvc
}

// wantOutcome fails the test unless the run ended status/reason.
func wantOutcome(t *testing.T, run *v1.TaskRun, want string) {
	t.Helper()
	if got := outcome(run); got != want {
		t.Fatalf("TaskRun %s ended %s (%q), want %s", run.Name, got, conditionMessage(run), want)
	}
}

// wantMessage fails the test unless the run's condition says want.
func wantMessage(t *testing.T, run *v1.TaskRun, want string) {
	t.Helper()
	if got := conditionMessage(run); got != want {
		t.Errorf("TaskRun %s's message is %q, want %q", run.Name, got, want)
	}
}

// finishedIn is how long the run took, from its creation to its end.
func finishedIn(run *v1.TaskRun) time.Duration {
	if run.Status.CompletionTime == nil {
		return 0
	}
	return run.Status.CompletionTime.Sub(run.CreationTimestamp.Time)
}
