//go:build e2e && e2enode

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// lostBound is how long after its kubelet stops a run on the real node
// ends, at most, in these tests: the node lifecycle controller's
// --node-monitor-grace-period (50s) and --node-monitor-period (5s) on a
// real node's cluster (hack/local-cluster.sh), then the manager's
// --node-lost-timeout (docs/lifecycle.md, "Node faults"). The tests only
// check it with a wide margin (the machine is shared); they log what they
// measured.
const lostBound = 50*time.Second + 5*time.Second + nodeLostTimeout

// lostMargin is what a busy machine may add to lostBound before a test
// fails.
const lostMargin = time.Minute

// TestNodeFaults breaks the real node while steps run, on two clusters at
// once, and checks what the containers did (the files their steps wrote on
// this machine, their logs) and what the runs say:
//
//   - on e2e-node-faults, a kubelet restart and a containerd restart in the
//     middle of two runs' steps, which lose nothing; then the kubelet killed
//     for good: a run ends PodFailed naming the node within lostBound, while
//     two runs that retry wait until their first Pod is fenced, one by its
//     Pod force-deleted, one by the out-of-service taint, and only then
//     retry, on a spare fake node;
//   - on e2e-node-faults-down, the manager and the kubelet killed together,
//     the manager back once the node has been lost for longer than
//     --node-lost-timeout: a run ends at once, another retries once the
//     Node is deleted.
//
// Before each fence the machine is halted (the node's containers killed),
// as an administrator who fences a node knows it is: the lost steps ran on
// until then, and a retry began only after.
func TestNodeFaults(t *testing.T) {
	t.Run("restarts-then-lost", func(t *testing.T) {
		t.Parallel()
		n := newFaultNode(t, "node-faults")
		t.Run("kubelet-and-containerd-restart", func(t *testing.T) { restartsLoseNothing(t, n) })
		if !t.Failed() {
			lostKubelet(t, n)
		}
	})
	t.Run("down-together", func(t *testing.T) {
		t.Parallel()
		controllerAndKubeletDown(t, newFaultNode(t, "node-faults-down"))
	})
}

// restartsLoseNothing: two runs whose first step prints 20 lines a second
// apart; the kubelet is restarted while both run it, then containerd. Each
// run succeeds once: each step wrote its start and end once, its log holds
// each line once, the first step's exit code (3, let pass) and result are
// recorded, and no container restarted but, at most once, the one
// waiting; a kubectl task logs -f following the first through both restarts
// prints every line once.
func restartsLoseNothing(t *testing.T, n *faultNode) {
	names := []string{"restarts-a", "restarts-b"}
	for _, name := range names {
		task, run := n.restartedRun(name)
		create(t, n.c, task, run)
	}
	// kubectl task logs -f follows one of them through both restarts.
	followed := follow(t, n.c, names[0])
	waitFor(t, 2*time.Minute, "both runs' first step to start", func(ctx context.Context) error {
		for _, name := range names {
			if len(n.lines(t, name)) == 0 {
				return fmt.Errorf("run %s has not started its step", name)
			}
		}
		return nil
	})
	for _, component := range []string{"kubelet", "containerd"} {
		for _, name := range names {
			if lines := n.lines(t, name); len(lines) != 1 {
				t.Fatalf("run %s's file reads %+v before the %s restart, want its first step still running", name, lines, component)
			}
		}
		n.script(t, "restart", component)
		t.Logf("restarted %s", component)
		n.waitKubeletHealthy(t)
	}
	got := waitFinished(t, n.c, 2*time.Minute, names...)
	var want []string
	for i := 1; i <= 20; i++ {
		want = append(want, fmt.Sprintf("[work] line %d", i))
	}
	if printed := followed.rest(t); !cmp.Equal(append(want, "[after] after"), printed) {
		t.Errorf("kubectl task logs -f %s, following it through the restarts, printed %q, want every line once, in order", names[0], printed)
	}
	pods, err := podsByRun(context.Background(), n.c)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		run := got[name]
		wantOutcome(t, run, "True/Succeeded")
		wantSteps := []stepEnd{{"work", 3, v1.StepReasonContinued}, {"after", 0, "Completed"}}
		if diff := cmp.Diff(wantSteps, stepEnds(run)); diff != "" {
			t.Errorf("TaskRun %s: how the steps ended (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff([]v1.RunResult{{Name: "kept", Value: ptr.To("through restarts")}}, run.Status.Results); diff != "" {
			t.Errorf("TaskRun %s: status.results (-want +got):\n%s", name, diff)
		}
		if len(pods[name]) != 1 {
			t.Errorf("TaskRun %s has Pods %v, want one", name, podNames(pods[name]))
		}
		var wrote []string
		for _, l := range n.lines(t, name) {
			wrote = append(wrote, l.what+" "+l.pod)
		}
		pod := run.Status.PodName
		if want := []string{"start work " + pod, "end work " + pod, "start after " + pod, "end after " + pod}; !cmp.Equal(want, wrote) {
			t.Errorf("TaskRun %s's steps wrote %q, want %q: each step once, in order", name, wrote, want)
		}
		var lines []string
		for i := 1; i <= 20; i++ {
			lines = append(lines, fmt.Sprintf("line %d\n", i))
		}
		if log := stepLog(t, n.c, run, "work"); log != strings.Join(lines, "") {
			t.Errorf("TaskRun %s: step work's log reads %q, want lines 1 to 20 once each", name, log)
		}
		if log := stepLog(t, n.c, run, "after"); log != "after\n" {
			t.Errorf("TaskRun %s: step after's log reads %q", name, log)
		}
		out := runPlugin(t, n.c, "logs", name)
		for _, want := range append(lines, "after\n") {
			if c := strings.Count(out, "] "+want); c != 1 {
				t.Errorf("kubectl task logs %s printed %q %d times, want once:\n%s", name, strings.TrimSpace(want), c, out)
			}
		}
		wantPodShape(t, n.c, run, runstate.PodShapeChained, "")
		p := runPod(t, n.c, run)
		// The kubelet creates anew, whatever the Pod's restart policy, a
		// container the runtime reports in an unknown or created state
		// (ShouldContainerBeRestarted), as a waiting step's may be across
		// containerd's restart: the chain's claim keeps its step to one
		// run, which the lines above hold. The step that was running
		// throughout must not have been.
		for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			switch {
			case s.RestartCount == 0:
			case s.Name == runstate.StepContainer("after") && s.RestartCount == 1:
				t.Logf("TaskRun %s: the waiting container %s was created anew once across the restarts", name, s.Name)
			default:
				t.Errorf("TaskRun %s: container %s restarted %d times", name, s.Name, s.RestartCount)
			}
		}
	}
}

// restartedRun is a run of a Task of its own, named name: step work writes
// its start to the run's file, prints "line 1" to "line 20" a second apart,
// writes the result kept and its end, and exits 3, let pass; step after
// writes its start, prints "after", and writes its end.
func (n *faultNode) restartedRun(name string) (*v1.Task, *v1.TaskRun) {
	file := `f="$(workspaces.log.path)/` + name + `"` + "\n"
	task := wrappers.Task(ns, name).Workspace("log").Results("kept").Steps(
		v1.Step{Name: "work", Image: alpineImage, OnError: v1.OnErrorContinue, Script: file +
			`echo "start work $(hostname) $(date +%s)" >> "$f"
for i in $(seq 1 20); do echo "line $i"; sleep 1; done
printf 'through restarts' > "$(results.kept.path)"
echo "end work $(hostname) $(date +%s)" >> "$f"
exit 3`},
		v1.Step{Name: "after", Image: alpineImage, Script: file +
			`echo "start after $(hostname) $(date +%s)" >> "$f"
echo after
echo "end after $(hostname) $(date +%s)" >> "$f"`},
	).Obj()
	return task, wrappers.TaskRun(ns, name, task.Name).Workspace(n.logWorkspace()).Obj()
}

// lostKubelet: three runs tick on the real node when its kubelet is killed
// for good. The one that does not retry ends PodFailed, naming the node,
// within lostBound (a kubectl task logs -f following it prints its lines,
// then that its log is gone with the node); the two that retry wait, Retrying, while their steps tick on;
// then the machine is halted, and one is fenced by its Pod force-deleted,
// the other, still waiting meanwhile, by the out-of-service taint.
func lostKubelet(t *testing.T, n *faultNode) {
	const plain, podDeleted, outOfService = "lost", "lost-pod-deleted", "lost-out-of-service"
	for name, retries := range map[string]int32{plain: 0, podDeleted: 1, outOfService: 1} {
		task, run := n.tickingRun(name, retries)
		create(t, n.c, task, run)
	}
	n.waitTicking(t, plain, podDeleted, outOfService)
	followed := follow(t, n.c, plain)
	before := followed.waitLines(t, 2)
	lost := time.Now()
	n.script(t, "kill", "kubelet")
	n.useSpare(t)

	t.Run("kubelet-stopped", func(t *testing.T) {
		run := n.waitRun(t, plain, lostBound+lostMargin+time.Minute, "to end", hasFinished)
		ended := time.Now()
		wantOutcome(t, run, "False/PodFailed")
		wantLostMessage(t, run)
		if diff := cmp.Diff([]stepEnd{{"work", -1, "NodeLost"}}, stepEnds(run)); diff != "" {
			t.Errorf("how the steps ended (-want +got):\n%s", diff)
		}
		t.Logf("the kubelet stopped to the run's end: %.1fs (bound %s: grace period 50s, monitor period 5s, --node-lost-timeout %s)",
			ended.Sub(lost).Seconds(), lostBound, nodeLostTimeout)
		if ended.Sub(lost) > lostBound+lostMargin {
			t.Errorf("the run ended %s after its kubelet stopped, more than %s past the bound of %s", ended.Sub(lost).Round(time.Second), lostMargin, lostBound)
		}
		checkFollowedTicks(t, append(before, followed.rest(t)...))
	})

	var waiting time.Time
	for _, name := range []string{podDeleted, outOfService} {
		n.waitRun(t, name, lostBound+lostMargin, "to wait for a fence", retryingFor)
		if waiting.IsZero() {
			waiting = time.Now()
		}
		n.checkRanOnWhileWaiting(t, name, waiting)
	}
	written := n.halt(t, podDeleted, outOfService)

	t.Run("pod-force-deleted", func(t *testing.T) {
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = ns, podDeleted+"-pod"
		fence := time.Now()
		if err := n.c.client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatalf("force-deleting Pod %s: %v", pod.Name, err)
		}
		n.checkRetryAfterFence(t, podDeleted, lost, fence, fmt.Sprintf("Pod %q was deleted before the run finished", pod.Name), written[podDeleted])
		// The other run's Pod, on the same node, is not fenced by this.
		other := &v1.TaskRun{}
		if err := n.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: outOfService}, other); err != nil {
			t.Fatal(err)
		}
		if err := retryingFor(other); err != nil {
			t.Errorf("TaskRun %s no longer waits for its fence once another run's Pod was deleted: %s: %q", outOfService, outcome(other), conditionMessage(other))
		}
	})

	t.Run("out-of-service", func(t *testing.T) {
		node := &corev1.Node{}
		if err := n.c.client.Get(context.Background(), client.ObjectKey{Name: realNodeName}, node); err != nil {
			t.Fatal(err)
		}
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
		fence := time.Now()
		if err := n.c.client.Update(context.Background(), node); err != nil {
			t.Fatalf("tainting node %s out of service: %v", realNodeName, err)
		}
		n.checkRetryAfterFence(t, outOfService, lost, fence,
			fmt.Sprintf("was lost with its node %q: the node is tainted %s", realNodeName, corev1.TaintNodeOutOfService), written[outOfService])
	})
}

// controllerAndKubeletDown: two runs tick on the real node when the
// manager and the kubelet are killed together. The manager starts again
// once the node has not been ready for longer than --node-lost-timeout
// (no timer of the dead manager's is left to end the runs): the run that
// does not retry ends PodFailed naming the node at once, the one that
// retries waits, while its step ticks on, until the Node is deleted.
func controllerAndKubeletDown(t *testing.T, n *faultNode) {
	const plain, nodeDeleted = "down", "down-node-deleted"
	for name, retries := range map[string]int32{plain: 0, nodeDeleted: 1} {
		task, run := n.tickingRun(name, retries)
		create(t, n.c, task, run)
	}
	n.waitTicking(t, plain, nodeDeleted)
	lost := time.Now()
	n.m.kill()
	n.script(t, "kill", "kubelet")
	n.useSpare(t)
	waitFor(t, lostBound+lostMargin, "the real node to be lost for longer than --node-lost-timeout", func(ctx context.Context) error {
		r := n.nodeReady(ctx, realNodeName)
		if r == nil || r.Status == corev1.ConditionTrue || time.Since(r.LastTransitionTime.Time) < nodeLostTimeout+2*time.Second {
			return fmt.Errorf("its Ready condition is %+v", r)
		}
		return nil
	})
	restarted := time.Now()
	n.m.start()

	t.Run("controller-and-kubelet-down", func(t *testing.T) {
		run := n.waitRun(t, plain, time.Minute, "to end", hasFinished)
		wantOutcome(t, run, "False/PodFailed")
		wantLostMessage(t, run)
		t.Logf("the kubelet and the manager stopped to the run's end: %.1fs; the manager's start to it: %.1fs",
			time.Since(lost).Seconds(), time.Since(restarted).Seconds())
	})

	t.Run("node-deleted", func(t *testing.T) {
		n.waitRun(t, nodeDeleted, time.Minute, "to wait for a fence", retryingFor)
		n.checkRanOnWhileWaiting(t, nodeDeleted, time.Now())
		written := n.halt(t, nodeDeleted)
		fence := time.Now()
		node := &corev1.Node{}
		node.Name = realNodeName
		if err := n.c.client.Delete(context.Background(), node); err != nil {
			t.Fatalf("deleting node %s: %v", realNodeName, err)
		}
		n.checkRetryAfterFence(t, nodeDeleted, lost, fence,
			fmt.Sprintf("was lost with its node %q: the node was deleted", realNodeName), written[nodeDeleted])
	})
}

// wantLostMessage fails the test unless run's message says that its Pod
// was lost with the real node.
func wantLostMessage(t *testing.T, run *v1.TaskRun) {
	t.Helper()
	if want := fmt.Sprintf("Pod %q was lost with its node %q: ", run.Status.PodName, realNodeName); !strings.HasPrefix(conditionMessage(run), want) {
		t.Errorf("TaskRun %s's message is %q, want it to start %q", run.Name, conditionMessage(run), want)
	}
}
