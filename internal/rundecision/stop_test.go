package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStopRequested checks the end of a run cancelled or past its deadline,
// which says so when its Pod may go on where no kubelet can stop it.
func TestStopRequested(t *testing.T) {
	run := func() *wrappers.TaskRunWrapper {
		return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour).Started(metav1.NewTime(testTime.Add(-time.Minute)))
	}
	notReady := &nodefault.Verdict{Node: "n", NotReady: true, LostIn: time.Minute, Why: "the node is not ready"}
	deleted := &nodefault.Verdict{Node: "n", Fault: nodefault.NodeDeleted, Fenced: true, Why: "the node was deleted"}
	const stillRunning = `; its Pod "run-pod" may still be running on node "n", which is not ready: no kubelet could stop it`
	tests := map[string]struct {
		run  *v1.TaskRun
		node *nodefault.Verdict
		want *Outcome
	}{
		"going on": {run: run().Obj()},
		"cancelled": {
			run:  run().Cancelled().Obj(),
			want: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`),
		},
		"timed out": {
			run:  run().Timeout(time.Minute).Obj(),
			want: Failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 1m0s`),
		},
		"cancelled and timed out: the cancel": {
			run:  run().Timeout(time.Minute).Cancelled().Obj(),
			want: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`),
		},
		"cancelled, its node not ready: the Pod may still run": {
			run: run().Cancelled().Obj(), node: notReady,
			want: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled%s`, stillRunning),
		},
		"timed out, its node not ready: the Pod may still run": {
			run: run().Timeout(time.Minute).Obj(), node: notReady,
			want: Failed(v1.ReasonTimeout, `TaskRun "run" did not finish within 1m0s%s`, stillRunning),
		},
		"cancelled, its node deleted: the Pod runs nowhere": {
			run: run().Cancelled().Obj(), node: deleted,
			want: Failed(v1.ReasonCancelled, `TaskRun "run" was cancelled`),
		},
		"going on, its node not ready": {run: run().Obj(), node: notReady},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := attemptOf(tc.run, nil, testTime)
			a.Node = tc.node
			if diff := cmp.Diff(tc.want, a.StopRequested()); diff != "" {
				t.Errorf("StopRequested() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodOutlivesEnd: the runs that may end while their Pod goes on are
// those the Pod's hold, its pending timeout, a sidecar or a step that
// cannot go on ended, or whose steps ended while sidecars may run on, and
// that name a Pod.
func TestPodOutlivesEnd(t *testing.T) {
	ended := func(status metav1.ConditionStatus, reason v1.TaskRunReason, pod string) *v1.TaskRun {
		return wrappers.TaskRun("ns", "run", "t").PodName(pod).
			Conditions(metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason)}).Obj()
	}
	type want struct {
		Reason   v1.TaskRunReason
		Outlives bool
	}
	tests := map[string]struct {
		run  *v1.TaskRun
		want want
	}{
		"no condition":                   {run: wrappers.TaskRun("ns", "run", "t").PodName("run-pod").Obj()},
		"going on":                       {run: ended(metav1.ConditionUnknown, v1.ReasonRunning, "run-pod")},
		"an image pull":                  {run: ended(metav1.ConditionFalse, v1.ReasonImagePullFailed, "run-pod"), want: want{v1.ReasonImagePullFailed, true}},
		"a configuration":                {run: ended(metav1.ConditionFalse, v1.ReasonPodConfigFailed, "run-pod"), want: want{v1.ReasonPodConfigFailed, true}},
		"a step":                         {run: ended(metav1.ConditionFalse, v1.ReasonStepFailed, "run-pod"), want: want{v1.ReasonStepFailed, true}},
		"a pending bound":                {run: ended(metav1.ConditionFalse, v1.ReasonPendingTimeout, "run-pod"), want: want{v1.ReasonPendingTimeout, true}},
		"a pending bound, no Pod":        {run: ended(metav1.ConditionFalse, v1.ReasonPendingTimeout, "")},
		"succeeded: sidecars may run on": {run: ended(metav1.ConditionTrue, v1.ReasonSucceeded, "run-pod"), want: want{v1.ReasonSucceeded, true}},
		"a sidecar":                      {run: ended(metav1.ConditionFalse, v1.ReasonSidecarFailed, "run-pod"), want: want{v1.ReasonSidecarFailed, true}},
		"timed out":                      {run: ended(metav1.ConditionFalse, v1.ReasonTimeout, "run-pod")},
		"cancelled":                      {run: ended(metav1.ConditionFalse, v1.ReasonCancelled, "run-pod")},
		"the Pod failed":                 {run: ended(metav1.ConditionFalse, v1.ReasonPodFailed, "run-pod")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got want
			got.Reason, got.Outlives = PodOutlivesEnd(tc.run)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodOutlivesEnd() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
