package controllers_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestImagePullTimeout checks --image-pull-timeout: a step whose image the
// kubelet fails to pull for longer ends the run ImagePullFailed, naming the
// step, the image and the kubelet's message, not retried; the wait counts
// from when the step could start; and the Pod is deleted if no step started,
// else stopped and kept.
func TestImagePullTimeout(t *testing.T) {
	h := newHarness(t)
	const timeout = 3 * time.Second
	h.startControllerWith(t, func(r *controllers.TaskRunReconciler) { r.ImagePullTimeout = timeout })
	h.Create(t, twoSteps("t"))

	t.Run("first step", func(t *testing.T) {
		t.Parallel()
		h.Create(t, retrying(wrappers.TaskRun("", "first", "t").Obj(), 2))
		pulling := time.Now().Truncate(time.Second)
		h.Kubelet(t, "first-pod", func(w *wrappers.PodStatusWrapper) {
			w.At(pulling).CannotPull(0, "ImagePullBackOff", `Back-off pulling image "alpine:3"`, time.Time{})
		})
		run := h.waitForCondition(t, "first", condition{metav1.ConditionFalse, v1beta1.ReasonImagePullFailed,
			`step "first" could not pull image "alpine:3" for 3s: ImagePullBackOff: Back-off pulling image "alpine:3"`})
		if took := run.Status.CompletionTime.Sub(pulling); took < timeout || took > timeout+3*time.Second {
			t.Errorf("the run failed %s after the pull began, want %s (to 3s more)", took, timeout)
		}
		if len(run.Status.Attempts) != 0 {
			t.Errorf("ImagePullFailed was retried: attempts %+v", run.Status.Attempts)
		}
		// No step started: nothing to keep.
		testenv.Eventually(t, func() (bool, string) {
			return isNotFound(h.Key("first-pod"), &corev1.Pod{}), "it still exists"
		}, "Pod first-pod to be deleted")
		consistently(t, time.Second, func() (bool, string) {
			return len(h.pods(t, "first")) == 0, "a Pod was created for another attempt"
		})
	})
	t.Run("second step, after a long first", func(t *testing.T) {
		t.Parallel()
		h.Create(t, wrappers.TaskRun("", "second", "t").Obj())
		// The Pod started 10 minutes ago; the second step's turn came now.
		turn := time.Now().Truncate(time.Second)
		h.Kubelet(t, "second-pod", func(w *wrappers.PodStatusWrapper) {
			w.At(turn.Add(-10*time.Minute)).CannotPull(1, "ErrImagePull",
				`rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/alpine:3"`, turn)
		})
		h.waitForCondition(t, "second", condition{metav1.ConditionUnknown, v1beta1.ReasonRunning,
			`running step "second" (2 of 2): ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/alpine:3"`})
		run := h.waitForCondition(t, "second", condition{metav1.ConditionFalse, v1beta1.ReasonImagePullFailed,
			`step "second" could not pull image "alpine:3" for 3s: ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/alpine:3"`})
		if took := run.Status.CompletionTime.Sub(turn); took < timeout || took > timeout+3*time.Second {
			t.Errorf("the run failed %s after the second step's turn came, want %s (to 3s more)", took, timeout)
		}
		// A step ran: the Pod is stopped, and kept for its logs.
		pod := h.WaitForPod(t, "second-pod")
		if ads := pod.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 700 {
			t.Errorf("Pod of a run that ended ImagePullFailed has activeDeadlineSeconds %v, want it lowered to the seconds since it started", ads)
		}
	})
}
