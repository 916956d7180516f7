package runpod

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestMayBeHeldByMount: a run's Pod's Events are read only while a volume
// may hold it back: taken up by a kubelet, which has not made its sandbox
// (it mounts the volumes first), and no step past waiting to be made.
func TestMayBeHeldByMount(t *testing.T) {
	pod := threeStepPod()
	pod.Spec.NodeName = "node-1"
	sandbox := func(status corev1.ConditionStatus) func(*corev1.PodStatus) {
		return func(s *corev1.PodStatus) {
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: status})
		}
	}
	tests := map[string]struct {
		pod    *corev1.Pod
		change func(*corev1.PodStatus)
		want   bool
	}{
		"taken up, no sandbox yet":                           {pod, sandbox(corev1.ConditionFalse), true},
		"its sandbox made: volumes are mounted":              {pod, sandbox(corev1.ConditionTrue), false},
		"a kubelet that does not say (before 1.29), or kwok": {pod, func(*corev1.PodStatus) {}, false},
		"not taken up": {pod, func(s *corev1.PodStatus) {
			sandbox(corev1.ConditionFalse)(s)
			s.StartTime = nil
		}, false},
		"not scheduled": {threeStepPod(), sandbox(corev1.ConditionFalse), false},
		"a step held for another reason": {pod, func(s *corev1.PodStatus) {
			sandbox(corev1.ConditionFalse)(s)
			s.InitContainerStatuses[0].State.Waiting.Reason = "ErrImagePull"
		}, false},
		"ended": {pod, func(s *corev1.PodStatus) {
			sandbox(corev1.ConditionFalse)(s)
			s.Phase = corev1.PodFailed
		}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status := wrappers.PodStatus(tc.pod).Obj()
			tc.change(&status)
			if got := MayBeHeldByMount(withStatus(tc.pod, status)); got != tc.want {
				t.Errorf("MayBeHeldByMount() = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestFailedMount: the volume a Pod's FailedMount Events say cannot mount,
// and the kubelet's message: the one its own error names, the latest such.
func TestFailedMount(t *testing.T) {
	at := func(minutes int) metav1.Time {
		return metav1.NewTime(testTime.Add(time.Duration(minutes) * time.Minute))
	}
	event := func(message string, last metav1.Time) corev1.Event {
		return corev1.Event{Reason: "FailedMount", Message: message, FirstTimestamp: at(0), LastTimestamp: last, Count: 3}
	}
	const (
		settings = `MountVolume.SetUp failed for volume "ws-settings" : configmap "settings" not found`
		creds    = `MountVolume.SetUp failed for volume "ws-creds" : secret "git" not found`
		gaveUp   = `Unable to attach or mount volumes: unmounted volumes=[ws-settings ws-creds], unattached volumes=[ws-settings ws-creds kube-api-access-x]: timed out waiting for the condition`
	)
	type found struct{ Volume, Reason, Message string }
	tests := map[string]struct {
		events []corev1.Event
		want   *found
	}{
		"none":       {nil, nil},
		"one":        {[]corev1.Event{event(settings, at(1))}, &found{"ws-settings", "FailedMount", settings}},
		"the latest": {[]corev1.Event{event(settings, at(1)), event(creds, at(2))}, &found{"ws-creds", "FailedMount", creds}},
		"the kubelet's own error before its giving up": {[]corev1.Event{event(settings, at(1)), event(gaveUp, at(3))},
			&found{"ws-settings", "FailedMount", settings}},
		"giving up alone: the first volume it names": {[]corev1.Event{event(gaveUp, at(3))}, &found{"ws-settings", "FailedMount", gaveUp}},
		"an Event of the new kind, a series": {[]corev1.Event{event(settings, at(1)), {Reason: "FailedMount", Message: creds,
			EventTime: metav1.NewMicroTime(testTime), Series: &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(testTime.Add(5 * time.Minute))}}},
			&found{"ws-creds", "FailedMount", creds}},
		"a message that names no volume": {[]corev1.Event{event("something else", at(1))}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got *found
			if h := FailedMount(tc.events); h != nil {
				got = &found{h.Volume, h.Why.Reason, h.Why.Message}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FailedMount() (-want +got):\n%s", diff)
			}
		})
	}
}
