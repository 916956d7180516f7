//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// nodeLostTimeout is the manager's --node-lost-timeout in the node fault
// tests: short, so that a lost node's runs end soon after the node lifecycle
// controller turns the node Unknown (50s), rather than a minute later.
const nodeLostTimeout = 10 * time.Second

// realNodeName is the real node's name (hack/real-node.sh).
const realNodeName = "localhost"

// spareNodeName is a fake node (kwok's) beside the real one, where a retry
// lands once the real node is lost: its steps are faked (hack/kwok/stages).
const spareNodeName = "spare"

// faultNode is a real-node cluster whose node a test breaks: its kubelet or
// containerd restarted or killed, the machine halted, through
// hack/real-node.sh. The steps of its runs write what they do to files on
// this machine (a hostPath volume), which the test reads.
type faultNode struct {
	c *cluster
	m *manager
	// files is the directory the steps write to: one file a run.
	files string
	// claim is the claim every run binds as its workspace "log", on files.
	claim string
}

// newFaultNode creates a real-node cluster named name, with a spare fake
// node beside it (cordoned: see useSpare), the manager running with
// --node-lost-timeout=nodeLostTimeout, and a claim on a directory of this
// machine for the steps to write to.
func newFaultNode(t *testing.T, name string) *faultNode {
	t.Helper()
	c := newNodeCluster(t, name)
	m := startNodeManager(t, c, "--node-lost-timeout="+nodeLostTimeout.String())
	n := &faultNode{c: c, m: m, files: t.TempDir(), claim: "fault-files"}
	if err := os.Chmod(n.files, 0o777); err != nil {
		t.Fatal(err)
	}
	pv, pvc := hostPathClaim(n.claim, n.files)
	// A Node kwok manages (hack/kwok/kwokctl.yaml: annotated
	// kwok.x-k8s.io/node=fake), cordoned until the real node is lost, so
	// that every first attempt runs for real.
	spare := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spareNodeName, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Spec:       corev1.NodeSpec{Unschedulable: true},
	}
	create(t, c, pv, pvc, spare)
	n.waitNodeReady(t, spareNodeName)
	return n
}

// script runs hack/real-node.sh CMD on the cluster's node, with args after
// its directory.
func (n *faultNode) script(t *testing.T, cmd string, args ...string) {
	t.Helper()
	all := append([]string{cmd, n.c.env["MINITASK_STATE"]}, args...)
	out, err := exec.Command(filepath.Join(n.c.repo, "hack/real-node.sh"), all...).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/real-node.sh %s: %v\n%s", strings.Join(all, " "), err, out)
	}
}

// waitKubeletHealthy waits until the node's kubelet answers its health
// check (its healthzPort, in the configuration hack/real-node.sh wrote).
func (n *faultNode) waitKubeletHealthy(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.c.env["MINITASK_STATE"], "node/kubelet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var port string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "healthzPort: "); ok {
			port = strings.TrimSpace(v)
		}
	}
	probe := &http.Client{Timeout: time.Second}
	waitFor(t, time.Minute, "the kubelet to be healthy", func(ctx context.Context) error {
		resp, err := probe.Get("http://127.0.0.1:" + port + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("its health check answered %s", resp.Status)
		}
		return nil
	})
}

// useSpare uncordons the spare node: a retry can land there now.
func (n *faultNode) useSpare(t *testing.T) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: spareNodeName}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":false}}`))
	if err := n.c.client.Patch(context.Background(), node, patch); err != nil {
		t.Fatalf("uncordoning node %s: %v", spareNodeName, err)
	}
}

// waitNodeReady waits until the node is Ready.
func (n *faultNode) waitNodeReady(t *testing.T, name string) {
	t.Helper()
	waitFor(t, time.Minute, "node "+name+" to be Ready", func(ctx context.Context) error {
		if r := n.nodeReady(ctx, name); r == nil || r.Status != corev1.ConditionTrue {
			return fmt.Errorf("its Ready condition is %+v", r)
		}
		return nil
	})
}

// nodeReady returns the node's Ready condition; nil if it has none, or
// cannot be read.
func (n *faultNode) nodeReady(ctx context.Context, name string) *corev1.NodeCondition {
	node := &corev1.Node{}
	if err := n.c.client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return nil
	}
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// tickingRun is a run of a Task of its own, named name, whose one step,
// "work", writes "start POD UNIXTIME" to the run's file, then "tick POD
// UNIXTIME" every second, for ever; it prints "tick N" each time. A retry
// on the spare node runs for a second (kwok reads its sleep) and succeeds.
func (n *faultNode) tickingRun(name string, retries int32) (*v1.Task, *v1.TaskRun) {
	task := wrappers.Task(ns, name).Workspace("log").Steps(v1.Step{Name: "work", Image: alpineImage,
		Script: `f="$(workspaces.log.path)/` + name + `"
echo "start $(hostname) $(date +%s)" >> "$f"
i=0
while :; do
  i=$((i + 1))
  echo "tick $(hostname) $(date +%s)" >> "$f"
  echo "tick $i"
  sleep 1
done`}).Obj()
	run := wrappers.TaskRun(ns, name, task.Name).Workspace(n.logWorkspace()).Obj()
	if retries > 0 {
		run.Spec.Retries = ptr.To(retries)
		run.Spec.RetryOn = []v1.RetryReason{v1.RetryOnPodFailed}
	}
	return task, run
}

func (n *faultNode) logWorkspace() v1.WorkspaceBinding {
	return v1.WorkspaceBinding{Name: "log",
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n.claim}}
}

// fileLine is one line a step wrote to its run's file: what (start, tick,
// end...), the Pod it ran in, and the time it wrote it (whole seconds).
type fileLine struct {
	what, pod string
	at        time.Time
}

// lines reads what the steps of the run named name wrote to its file.
func (n *faultNode) lines(t *testing.T, name string) []fileLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.files, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var lines []fileLine
	// The last piece is "" after the last newline, or a line being written.
	whole := strings.Split(string(b), "\n")
	for _, l := range whole[:len(whole)-1] {
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("the file of run %s has the line %q, want WHAT POD TIME", name, l)
		}
		secs, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("the file of run %s has the line %q: %v", name, l, err)
		}
		lines = append(lines, fileLine{what: strings.Join(f[:len(f)-2], " "), pod: f[len(f)-2], at: time.Unix(secs, 0)})
	}
	return lines
}

// waitTicking waits until each named run's step has started on the real
// node and written a tick.
func (n *faultNode) waitTicking(t *testing.T, names ...string) {
	t.Helper()
	waitFor(t, 2*time.Minute, fmt.Sprintf("the steps of %v to run", names), func(ctx context.Context) error {
		for _, name := range names {
			if lines := n.lines(t, name); len(lines) < 2 {
				return fmt.Errorf("run %s's file has %d lines", name, len(lines))
			}
		}
		return nil
	})
}

// waitRun waits until the run named name is as ok says, and returns it.
func (n *faultNode) waitRun(t *testing.T, name string, timeout time.Duration, what string, ok func(*v1.TaskRun) error) *v1.TaskRun {
	t.Helper()
	run := &v1.TaskRun{}
	waitFor(t, timeout, fmt.Sprintf("TaskRun %s %s", name, what), func(ctx context.Context) error {
		if err := n.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return err
		}
		if err := ok(run); err != nil {
			return fmt.Errorf("it is %s: %q: %w", outcome(run), conditionMessage(run), err)
		}
		return nil
	})
	return run
}

// hasFinished is a waitRun condition: the run has finished.
func hasFinished(run *v1.TaskRun) error {
	if !runstate.Finished(run) {
		return fmt.Errorf("not finished")
	}
	return nil
}

// retryingFor is a waitRun condition: the run is Retrying, waiting for its
// first attempt's Pod to be fenced.
func retryingFor(run *v1.TaskRun) error {
	want := `which is not ready: waiting for the node to be deleted, tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2`
	if outcome(run) != "Unknown/Retrying" || !strings.Contains(conditionMessage(run), want) {
		return fmt.Errorf("not waiting for a fence")
	}
	return nil
}

// checkRanOnWhileWaiting fails the test unless the first attempt's step of
// the run named name wrote after since, while its run waited for a fence:
// the step ran on, though no kubelet reported on it, and another attempt
// would have run beside it. It checks that the run has one Pod only.
func (n *faultNode) checkRanOnWhileWaiting(t *testing.T, name string, since time.Time) {
	t.Helper()
	waitFor(t, time.Minute, "the lost step of "+name+" to write on while its run waits", func(ctx context.Context) error {
		lines := n.lines(t, name)
		if len(lines) == 0 || !lines[len(lines)-1].at.After(since) {
			return fmt.Errorf("its lines: %+v", lines)
		}
		return nil
	})
	pods, err := podsByRun(context.Background(), n.c)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods[name]) != 1 {
		t.Errorf("TaskRun %s has Pods %v while it waits for a fence, want its first only", name, podNames(pods[name]))
	}
}

// halt takes the real node's machine down (hack/real-node.sh halt: the
// kubelet and every container's processes killed), and returns what the
// steps of the named runs had written by then, once it has stopped growing.
func (n *faultNode) halt(t *testing.T, names ...string) map[string][]fileLine {
	t.Helper()
	n.script(t, "halt")
	// A write under way when its process was killed has landed by now.
	time.Sleep(2 * time.Second)
	written := map[string][]fileLine{}
	for _, name := range names {
		written[name] = n.lines(t, name)
	}
	return written
}

// checkRetryAfterFence fails the test unless the run named name, fenced at
// fence after its node was lost at lost, succeeded on its second attempt on
// the spare node, that attempt's Pod created no earlier than the fence, the
// first attempt recorded as PodFailed, its message holding fenceWords, and
// its step wrote nothing after what the halt left (written): no two
// attempts' steps ran at once. It logs the loss and the fence to the
// retry's first step.
func (n *faultNode) checkRetryAfterFence(t *testing.T, name string, lost, fence time.Time, fenceWords string, written []fileLine) {
	t.Helper()
	run := n.waitRun(t, name, 2*time.Minute, "to finish on its retry", hasFinished)
	wantOutcome(t, run, "True/Succeeded")
	if len(run.Status.Attempts) != 1 {
		t.Fatalf("TaskRun %s: status.attempts %+v, want the lost one", name, run.Status.Attempts)
	}
	first := run.Status.Attempts[0]
	if first.Reason != string(v1.ReasonPodFailed) || !strings.Contains(first.Message, fenceWords) {
		t.Errorf("TaskRun %s's first attempt: %s: %q, want PodFailed: ...%s...", name, first.Reason, first.Message, fenceWords)
	}
	pod := runPod(t, n.c, run)
	if pod.Spec.NodeName != spareNodeName {
		t.Errorf("TaskRun %s's retry ran on node %q, want %q", name, pod.Spec.NodeName, spareNodeName)
	}
	// The API server's times are whole seconds.
	if pod.CreationTimestamp.Time.Before(fence.Truncate(time.Second)) {
		t.Errorf("TaskRun %s's retry Pod %s was created at %s, before the fence at %s", name, pod.Name, pod.CreationTimestamp.UTC(), fence.UTC())
	}
	if got := n.lines(t, name); len(got) != len(written) {
		t.Errorf("TaskRun %s: its first attempt's step wrote %d lines after the halt (%+v): it ran on", name, len(got)-len(written), got[len(written):])
	}
	for _, l := range written {
		if l.pod != first.PodName {
			t.Errorf("TaskRun %s's file has %+v, from a Pod other than its first attempt's %s", name, l, first.PodName)
		}
	}
	// The first attempt's step had stopped writing before the fence, and
	// so before the retry's Pod was created.
	if last := written[len(written)-1]; last.at.After(fence) {
		t.Errorf("TaskRun %s's first attempt wrote %+v, after the fence at %s", name, last, fence.UTC())
	}
	if started := run.Status.Steps[0].StartedAt; started != nil {
		// The API server's times are whole seconds: the fence's and the
		// loss's are cut to match.
		f, l := fence.Truncate(time.Second), lost.Truncate(time.Second)
		t.Logf("TaskRun %s: loss to fence %.1fs; fence to the retry's Pod %.0fs, to its first step %.0fs; loss to the retry's first step %.0fs",
			name, fence.Sub(lost).Seconds(), pod.CreationTimestamp.Sub(f).Seconds(), started.Sub(f).Seconds(), started.Sub(l).Seconds())
	}
}
