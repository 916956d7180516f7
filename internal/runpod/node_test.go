package runpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// failedByPodGC returns pod as the Pod garbage collector leaves a Pod whose
// node is gone, before it deletes it: Failed, its steps as last reported,
// and a DisruptionTarget condition saying why.
func failedByPodGC(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
	return pod
}

func TestJudgedByNode(t *testing.T) {
	pod := threeStepPod()
	pod.Spec.NodeName = "node-1"
	status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
	deleting := withStatus(pod, status().Running(1).Obj())
	deleting.DeletionTimestamp = &metav1.Time{Time: testTime}
	evictedByTaintManager := withStatus(pod, status().Running(1).Obj())
	evictedByTaintManager.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint"}}
	evictedByTaintManager.DeletionTimestamp = &metav1.Time{Time: testTime}
	unscheduled := threeStepPod()
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"no Pod":                       {nil, false},
		"not scheduled":                {withStatus(unscheduled, corev1.PodStatus{Phase: corev1.PodPending}), false},
		"pending on a node":            {withStatus(pod, status().Obj()), true},
		"running":                      {withStatus(pod, status().Running(2).Obj()), true},
		"being deleted":                {deleting, true},
		"evicted by a NoExecute taint": {evictedByTaintManager, true},
		"failed by the Pod GC":         {failedByPodGC(withStatus(pod, status().Running(1).Obj())), true},
		"failed by the Pod GC, no condition": {withStatus(pod, func() corev1.PodStatus {
			st := status().Running(1).Obj()
			st.Phase = corev1.PodFailed
			return st
		}()), true},
		"succeeded":               {withStatus(pod, status().Succeeded().Obj()), false},
		"a step failed":           {withStatus(pod, status().StepFailed(1, 3).Obj()), false},
		"evicted by its kubelet":  {withStatus(pod, status().Evicted(0, "The node was low on resource: memory.").Obj()), false},
		"stopped at its deadline": {withStatus(pod, status().DeadlineExceeded(0).Obj()), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			node, got := JudgedByNode(tc.pod)
			if got != tc.want {
				t.Errorf("JudgedByNode() = %t, want %t", got, tc.want)
			}
			if got && node != "node-1" {
				t.Errorf("JudgedByNode() names node %q, want the Pod's, node-1", node)
			}
		})
	}
}

// TestNodeLostTolerations checks the tolerations Build gives a Pod for the
// taints of a node that is not ready or unreachable, and that a toleration
// of the run's podTemplate covering either taint is kept instead.
func TestNodeLostTolerations(t *testing.T) {
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
	unreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoSchedule}
	forever := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	notReadyNoSchedule := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tests := map[string]struct {
		seconds *int64
		own     []corev1.Toleration
		want    []corev1.Toleration
	}{
		"none asked for":                  {nil, nil, nil},
		"none asked for, the user's kept": {nil, []corev1.Toleration{dedicated}, []corev1.Toleration{dedicated}},
		"both":                            {ptr.To[int64](60), nil, []corev1.Toleration{notReady, unreachable}},
		"after the user's":                {ptr.To[int64](60), []corev1.Toleration{dedicated}, []corev1.Toleration{dedicated, notReady, unreachable}},
		"the user tolerates unreachable for ever": {ptr.To[int64](60), []corev1.Toleration{forever}, []corev1.Toleration{forever, notReady}},
		"the user tolerates every taint":          {ptr.To[int64](60), []corev1.Toleration{everything}, []corev1.Toleration{everything}},
		"a NoSchedule toleration covers no eviction": {ptr.To[int64](60), []corev1.Toleration{notReadyNoSchedule},
			[]corev1.Toleration{notReadyNoSchedule, notReady, unreachable}},
	}
	task := wrappers.Task("ns", "t").Step("only", "alpine:3", "").Obj()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := wrappers.TaskRun("ns", "run", "t").Obj()
			if tc.own != nil {
				run.Spec.PodTemplate = &v1.PodTemplate{Tolerations: tc.own}
			}
			pod, err := Build(run, task, Inputs{Name: "run-pod", NodeLostTolerationSeconds: tc.seconds})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pod.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations mismatch (-want +got):\n%s", diff)
			}
			if tc.own != nil && !cmp.Equal(tc.own, run.Spec.PodTemplate.Tolerations) {
				t.Errorf("Build changed the run's own tolerations to %v", run.Spec.PodTemplate.Tolerations)
			}
		})
	}
}
