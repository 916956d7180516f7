package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These test what a run makes of its Pod's node failing, from the run, its
// Pod, the Node as nodefault judges it, and the clock.

// TestEndOrRetryOnANodeFault decides, for a run whose Pod runs on node "n",
// what comes of each way the node can fail: the run's outcome, whether it
// records the attempt (and so moves on to the next one), and whether it
// stops the Pod (for a kubelet that comes back).
func TestEndOrRetryOnANodeFault(t *testing.T) {
	start := testTime.Add(-10 * time.Minute)
	silentSince := testTime.Add(-2 * time.Minute)
	running := func() *corev1.Pod {
		pod := onNode(threeStepPod())
		return withStatus(pod, wrappers.PodStatus(pod).At(start).Running(1).Obj())
	}
	deleting := func() *corev1.Pod { return deletedAt(running(), testTime.Add(-time.Second)) }
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour) }
	const unknownSince = "Ready is Unknown since 2026-01-01T11:58:00Z: NodeStatusUnknown: Kubelet stopped posting node status."
	lost := `Pod "run-pod" was lost with its node "n": the node has not been ready for longer than 1m0s (` + unknownSince + ")"
	stillRunning := `; its Pod "run-pod" may still be running on node "n", which is not ready: no kubelet could stop it`
	type want = endJudgement
	type attempt = recordedAttempt
	tests := map[string]struct {
		run  *v1.TaskRun
		pod  *corev1.Pod
		node *corev1.Node // nil: deleted
		now  time.Time
		want want
	}{
		"node ready: the Pod goes on": {
			run: run().Obj(), pod: running(), node: wrappers.Node(corev1.ConditionTrue, silentSince), now: testTime,
		},
		"node not ready, not for long yet": {
			run: run().Obj(), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, testTime.Add(-30*time.Second)), now: testTime,
		},
		"node not ready for longer than the timeout, no retries: PodFailed, the Pod stopped": {
			run: run().Obj(), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: Failed(v1.ReasonPodFailed, "%s", lost), StopPod: true},
		},
		"node deleted, no retries": {
			run: run().Obj(), pod: running(), now: testTime,
			want: want{Outcome: Failed(v1.ReasonPodFailed, `Pod "run-pod" was lost with its node "n": the node was deleted`), StopPod: true},
		},
		"node not ready, retries: the next attempt waits for the Pod to be fenced": {
			run: withRetries(run().Obj(), 2), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Next: WaitForFence, WaitsForFence: true, Outcome: Unknown(v1.ReasonRetrying, "attempt 1 of 3 failed (PodFailed): %s; "+
				`attempt 1's Pod "run-pod" may still be running on node "n", which is not ready: waiting for the node to be deleted, `+
				"tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2", lost)},
		},
		"evicted by the taint manager from a node not ready: lost at once, and waits": {
			run: withRetries(run().Obj(), 1), pod: deleting(), node: wrappers.Node(corev1.ConditionUnknown, testTime.Add(-10*time.Second)), now: testTime,
			want: want{Next: WaitForFence, WaitsForFence: true, Outcome: Unknown(v1.ReasonRetrying, "attempt 1 of 2 failed (PodFailed): "+
				`Pod "run-pod" was lost with its node "n": the Pod was deleted while the node is not ready `+
				"(Ready is Unknown since 2026-01-01T11:59:50Z: NodeStatusUnknown: Kubelet stopped posting node status.); "+
				`attempt 1's Pod "run-pod" may still be running on node "n", which is not ready: waiting for the node to be deleted, `+
				"tainted node.kubernetes.io/out-of-service, or the Pod to be gone before attempt 2")},
		},
		"node tainted out of service, retries: the attempt is recorded, the next one goes on": {
			run: withRetries(run().Obj(), 2), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, silentSince, wrappers.OutOfServiceTaint), now: testTime,
			want: want{Next: Retry, StopPod: true, Attempts: []attempt{{"run-pod", "PodFailed",
				`Pod "run-pod" was lost with its node "n": the node is tainted node.kubernetes.io/out-of-service`}}},
		},
		"node deleted, retries": {
			run: withRetries(run().Obj(), 2), pod: running(), now: testTime,
			want: want{Next: Retry, StopPod: true, Attempts: []attempt{{"run-pod", "PodFailed",
				`Pod "run-pod" was lost with its node "n": the node was deleted`}}},
		},
		"lost and timed out: the timeout, saying the Pod may still run": {
			run: withRetries(run().Timeout(5*time.Minute).Obj(), 2), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: Failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 5m0s%s`, stillRunning), StopPod: true},
		},
		"lost with a node deleted and timed out: the Pod runs nowhere": {
			run: run().Timeout(5 * time.Minute).Obj(), pod: running(), now: testTime,
			want: want{Outcome: Failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 5m0s`), StopPod: true},
		},
		"lost and cancelled": {
			run: run().Cancelled().Obj(), pod: running(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled%s`, stillRunning), StopPod: true},
		},
		"lost and cancelled, its Pod being deleted: nothing to stop": {
			run: run().Cancelled().Obj(), pod: deleting(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			want: want{Outcome: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled%s`, stillRunning)},
		},
		"failed by the Pod GC once its node was gone": {
			run: withRetries(run().Obj(), 1), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				pod.Status.Phase = corev1.PodFailed
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
					Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}}
				return pod
			}(),
			want: want{Next: Retry, Attempts: []attempt{{"run-pod", "PodFailed", `Pod "run-pod" was lost with its node "n": the node was deleted`}}},
		},
		"failed by the Pod GC on a node out of service, no retries: the node says why": {
			run: run().Obj(), node: wrappers.Node(corev1.ConditionUnknown, silentSince, wrappers.OutOfServiceTaint), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				pod.Status.Phase = corev1.PodFailed
				return pod
			}(),
			want: want{Outcome: Failed(v1.ReasonPodFailed, `Pod "run-pod" was lost with its node "n": the node is tainted node.kubernetes.io/out-of-service`)},
		},
		"a step failed before its node went: the step's failure": {
			run: run().Obj(), node: wrappers.Node(corev1.ConditionUnknown, silentSince), now: testTime,
			pod: func() *corev1.Pod {
				pod := running()
				return withStatus(pod, wrappers.PodStatus(pod).At(start).StepFailed(1, 3).Obj())
			}(),
			want: want{Outcome: Failed(v1.ReasonStepFailed, `step "b" exited with code 3`)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.run.Status.StartTime = &metav1.Time{Time: start}
			tc.run.Status.PodName = "run-pod"
			a := attemptOf(tc.run, tc.pod, tc.now)
			judgeNode(a, tc.node)
			if diff := cmp.Diff(tc.want, judgeEnd(a)); diff != "" {
				t.Errorf("EndOrRetry() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressOnANodeNotReady checks that a run going on says that its
// Pod's node is not ready, and asks to be looked at when it will be lost.
func TestProgressOnANodeNotReady(t *testing.T) {
	pod := onNode(threeStepPod())
	pod = withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(1).Obj())
	const notReady = `; node "n": the node is not ready (Ready is Unknown since 2026-01-01T11:59:40Z: NodeStatusUnknown: Kubelet stopped posting node status.)`
	type want struct {
		Outcome      *Outcome
		RequeueAfter time.Duration
	}
	tests := map[string]struct {
		node *corev1.Node
		want want
	}{
		"not ready for 20s: looked at again when it will have been for a minute": {
			node: wrappers.Node(corev1.ConditionUnknown, testTime.Add(-20*time.Second)),
			want: want{Unknown(v1.ReasonRunning, `running step "b" (2 of 3)%s`, notReady), 40 * time.Second},
		},
		"ready: at the deadline": {
			node: wrappers.Node(corev1.ConditionTrue, testTime.Add(-20*time.Second)),
			want: want{Unknown(v1.ReasonRunning, `running step "b" (2 of 3)`), 59 * time.Minute},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := withPodName(withStart(wrappers.TaskRun("ns", "run", "t").Obj(), testTime.Add(-time.Minute)), "run-pod")
			a := attemptOf(run, pod, testTime)
			judgeNode(a, tc.node)
			if next, stopPod := a.EndOrRetry(); next != Stand || stopPod || a.Decided() {
				t.Fatalf("EndOrRetry() = %v, %t, outcome %+v; want the attempt to go on", next, stopPod, a.Outcome)
			}
			a.Outcome = a.Progress()
			a.Settle()
			got := want{a.Outcome, a.RequeueAfter()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarkStepsLost(t *testing.T) {
	started := metav1.NewTime(testTime)
	steps := []v1.StepState{
		{Name: "a", State: v1.StepTerminated, Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &started, FinishedAt: &started},
		{Name: "b", State: v1.StepRunning, StartedAt: &started},
		{Name: "c", State: v1.StepWaiting, Reason: "PodInitializing"},
	}
	markStepsLost(steps)
	want := []v1.StepState{
		{Name: "a", State: v1.StepTerminated, Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &started, FinishedAt: &started},
		{Name: "b", State: v1.StepTerminated, Reason: "NodeLost", StartedAt: &started},
		{Name: "c", State: v1.StepTerminated, Reason: "NodeLost"},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("markStepsLost() mismatch (-want +got):\n%s", diff)
	}
}

// TestApplyStatusOnALostNode: a run that ends with its Pod lost with its
// node reports the steps that had not ended as NodeLost; one that goes on,
// or whose node is not lost, reports them as the kubelet last did.
func TestApplyStatusOnALostNode(t *testing.T) {
	started := metav1.NewTime(testTime.Add(-10 * time.Minute))
	now := metav1.NewTime(testTime)
	pod := onNode(threeStepPod())
	pod = withStatus(pod, wrappers.PodStatus(pod).At(started.Time).Running(1).Obj())
	completed := v1.StepState{Name: "a", State: v1.StepTerminated, Reason: "Completed", ExitCode: ptr.To[int32](0), StartedAt: &started, FinishedAt: &started}
	asReported := []v1.StepState{completed, {Name: "b", State: v1.StepRunning, StartedAt: &started}, {Name: "c", State: v1.StepWaiting, Reason: "PodInitializing"}}
	lost := &nodefault.Verdict{Node: "n", Fault: nodefault.NodeDeleted, Fenced: true, Why: "the node was deleted"}
	notReady := &nodefault.Verdict{Node: "n", NotReady: true, LostIn: time.Minute, Why: "the node is not ready"}
	tests := map[string]struct {
		outcome *Outcome
		node    *nodefault.Verdict
		want    []v1.StepState
	}{
		"ended, lost with its node": {
			outcome: Failed(v1.ReasonPodFailed, "lost"), node: lost,
			want: []v1.StepState{completed, {Name: "b", State: v1.StepTerminated, Reason: "NodeLost", StartedAt: &started}, {Name: "c", State: v1.StepTerminated, Reason: "NodeLost"}},
		},
		"cancelled, lost with its node: stopped by the cancel": {
			outcome: Failed(v1.ReasonCancelled, "cancelled"), node: lost,
			want: []v1.StepState{completed,
				{Name: "b", State: v1.StepTerminated, Reason: "TaskRunCancelled", StartedAt: &started, FinishedAt: &now},
				{Name: "c", State: v1.StepTerminated, Reason: "TaskRunCancelled"}},
		},
		"retrying, lost with its node: as reported": {
			outcome: Unknown(v1.ReasonRetrying, "waiting for a fence"), node: lost, want: asReported,
		},
		"ended, on a node not ready but not lost: as reported": {
			outcome: Failed(v1.ReasonPodFailed, "evicted"), node: notReady, want: asReported,
		},
		"ended, on no node's say: as reported": {
			outcome: Failed(v1.ReasonPodFailed, "evicted"), want: asReported,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(withStart(wrappers.TaskRun("ns", "run", "t").Obj(), started.Time), pod, now.Time)
			a.Outcome, a.Node = tc.outcome, tc.node
			a.ApplyStatus()
			if diff := cmp.Diff(tc.want, a.Run.Status.Steps); diff != "" {
				t.Errorf("status.steps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
