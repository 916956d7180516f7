package nodefault

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var testTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// node returns a Node named n whose Ready condition has status since
// testTime, with reason and message, and the taints given.
func node(status corev1.ConditionStatus, reason, message string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message,
				LastHeartbeatTime: metav1.NewTime(testTime.Add(time.Hour)), LastTransitionTime: metav1.NewTime(testTime)},
		}},
	}
}

var (
	outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	unreachable  = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
)

func TestJudge(t *testing.T) {
	const lostAfter = time.Minute
	silent := node(corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", unreachable)
	unknownSince := "Ready is Unknown since 2026-03-04T05:06:07Z: NodeStatusUnknown: Kubelet stopped posting node status."
	tests := map[string]struct {
		node      *corev1.Node // nil: deleted
		deleting  bool
		now       time.Time
		lostAfter time.Duration
		want      Verdict
	}{
		"ready": {
			node: node(corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"), now: testTime.Add(time.Hour),
			want: Verdict{Node: "n"},
		},
		"no Ready condition yet": {
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, now: testTime,
			want: Verdict{Node: "n"},
		},
		"ready, Pod being deleted: its kubelet stops it": {
			node: node(corev1.ConditionTrue, "", ""), deleting: true, now: testTime,
			want: Verdict{Node: "n"},
		},
		"deleted": {
			now:  testTime,
			want: Verdict{Node: "n", Fault: NodeDeleted, Fenced: true, Why: "the node was deleted"},
		},
		"out of service, whatever its Ready condition": {
			node: node(corev1.ConditionTrue, "", "", outOfService), now: testTime,
			want: Verdict{Node: "n", Fault: NodeOutOfService, Fenced: true, Why: "the node is tainted node.kubernetes.io/out-of-service"},
		},
		"out of service and silent": {
			node: node(corev1.ConditionUnknown, "NodeStatusUnknown", "", unreachable, outOfService), deleting: true, now: testTime,
			want: Verdict{Node: "n", Fault: NodeOutOfService, Fenced: true, Why: "the node is tainted node.kubernetes.io/out-of-service"},
		},
		"silent, not for long yet": {
			node: silent, now: testTime.Add(20 * time.Second),
			want: Verdict{Node: "n", NotReady: true, LostIn: 40 * time.Second, Why: "the node is not ready (" + unknownSince + ")"},
		},
		"silent for the whole timeout": {
			node: silent, now: testTime.Add(lostAfter),
			want: Verdict{Node: "n", Fault: NodeNotReady, NotReady: true,
				Why: "the node has not been ready for longer than 1m0s (" + unknownSince + ")"},
		},
		"its kubelet says not ready, for long": {
			node: node(corev1.ConditionFalse, "KubeletNotReady", "container runtime is down"), now: testTime.Add(time.Hour),
			want: Verdict{Node: "n", Fault: NodeNotReady, NotReady: true,
				Why: "the node has not been ready for longer than 1m0s (Ready is False since 2026-03-04T05:06:07Z: KubeletNotReady: container runtime is down)"},
		},
		"not ready, Pod being deleted: lost at once": {
			node: silent, deleting: true, now: testTime.Add(time.Second),
			want: Verdict{Node: "n", Fault: PodDeletedOnNotReadyNode, NotReady: true,
				Why: "the Pod was deleted while the node is not ready (" + unknownSince + ")"},
		},
		"not ready, no timeout: never lost by time": {
			node: silent, now: testTime.Add(24 * time.Hour), lostAfter: -1,
			want: Verdict{Node: "n", NotReady: true, Why: "the node is not ready (" + unknownSince + ")"},
		},
		"not ready since no known time": {
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}},
			now:  testTime,
			want: Verdict{Node: "n", NotReady: true, Why: "the node is not ready (Ready is Unknown)"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			after := lostAfter
			if tc.lostAfter != 0 {
				after = max(tc.lostAfter, 0)
			}
			got := Judge(Read("n", tc.node), tc.deleting, tc.now, after)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Judge() mismatch (-want +got):\n%s", diff)
			}
			if got.Lost() != (tc.want.Fault != None) {
				t.Errorf("Lost() = %t with fault %q", got.Lost(), got.Fault)
			}
		})
	}
	var none *Verdict
	if none.Lost() {
		t.Error("a nil Verdict (a Pod on no node) is lost")
	}
}

// TestReadIgnoresHeartbeats holds that a node's status report that changes
// only its heartbeat reads the same, so that the controller's watch lets it
// pass unseen.
func TestReadIgnoresHeartbeats(t *testing.T) {
	before := node(corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
	after := before.DeepCopy()
	after.Status.Conditions[1].LastHeartbeatTime = metav1.NewTime(testTime.Add(2 * time.Hour))
	after.Status.Conditions[0].LastTransitionTime = metav1.NewTime(testTime.Add(2 * time.Hour))
	if diff := cmp.Diff(Read("n", before), Read("n", after)); diff != "" {
		t.Errorf("a heartbeat changes what Read reads (-before +after):\n%s", diff)
	}
}

func TestTolerationSeconds(t *testing.T) {
	tests := map[time.Duration]*int64{
		0:                       nil,
		-time.Second:            nil,
		time.Minute:             ptr.To[int64](60),
		1500 * time.Millisecond: ptr.To[int64](2),
		time.Millisecond:        ptr.To[int64](1),
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, TolerationSeconds(in)); diff != "" {
			t.Errorf("TolerationSeconds(%s) mismatch (-want +got):\n%s", in, diff)
		}
	}
}
