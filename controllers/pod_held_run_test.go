package controllers_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
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
		run := h.waitForCondition(t, "first", condition{metav1.ConditionFalse, v1.ReasonImagePullFailed,
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
		h.waitForCondition(t, "second", condition{metav1.ConditionUnknown, v1.ReasonRunning,
			`running step "second" (2 of 2): ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/alpine:3"`})
		run := h.waitForCondition(t, "second", condition{metav1.ConditionFalse, v1.ReasonImagePullFailed,
			`step "second" could not pull image "alpine:3" for 3s: ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/alpine:3"`})
		if took := run.Status.CompletionTime.Sub(turn); took < timeout || took > timeout+3*time.Second {
			t.Errorf("the run failed %s after the second step's turn came, want %s (to 3s more)", took, timeout)
		}
		// A step ran: the Pod is stopped, and kept for its logs. It is
		// stopped once the status has landed, by the finished run's
		// reconcile.
		testenv.Eventually(t, func() (bool, string) {
			ads := h.WaitForPod(t, "second-pod").Spec.ActiveDeadlineSeconds
			return ads != nil && *ads <= 700, fmt.Sprintf("activeDeadlineSeconds %v, want it lowered to the seconds since the Pod started", ads)
		}, "the Pod of a run that ended ImagePullFailed to be stopped")
	})
}

// TestHeldRunAfterALostStatusWrite makes the status write that ends a run
// held back too long (ImagePullFailed, PodConfigFailed) conflict with
// another write to the run, once. The next reconcile must decide the same
// outcome, not a PodFailed that the run's retries would retry: the Pod,
// which shows the hold, is stopped only after the status that says so has
// landed.
func TestHeldRunAfterALostStatusWrite(t *testing.T) {
	const timeout = 2 * time.Second
	tests := map[string]struct {
		reason v1.TaskRunReason
		hold   func(*wrappers.PodStatusWrapper)
		want   string
	}{
		"an image that cannot be pulled": {
			reason: v1.ReasonImagePullFailed,
			hold: func(w *wrappers.PodStatusWrapper) {
				w.At(time.Now().Truncate(time.Second)).CannotPull(0, "ImagePullBackOff", `Back-off pulling image "alpine:3"`, time.Time{})
			},
			want: `step "first" could not pull image "alpine:3" for 2s: ImagePullBackOff: Back-off pulling image "alpine:3"`,
		},
		"a missing Secret": {
			reason: v1.ReasonPodConfigFailed,
			hold: func(w *wrappers.PodStatusWrapper) {
				w.Waiting(0, "CreateContainerConfigError", `secret "git" not found`)
			},
			want: `step "first" could not start for 2s: CreateContainerConfigError: secret "git" not found`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.startControllerOn(t, func(c client.Client) client.Client { return &writeBeforeEnding{Client: c, reason: tc.reason} },
				func(r *controllers.TaskRunReconciler) { r.ImagePullTimeout, r.PodConfigTimeout = timeout, timeout })
			h.Create(t, twoSteps("t"), retrying(wrappers.TaskRun("", "unlucky", "t").Obj(), 2))
			h.Kubelet(t, "unlucky-pod", tc.hold)
			run := h.waitForCondition(t, "unlucky", condition{metav1.ConditionFalse, tc.reason, tc.want})
			if run.Labels[concurrentWriteLabel] == "" {
				t.Fatalf("no write came before the %s status write: the test did not make it conflict", tc.reason)
			}
			if len(run.Status.Attempts) != 0 {
				t.Errorf("%s after a lost status write was retried: attempts %+v", tc.reason, run.Status.Attempts)
			}
			for _, step := range run.Status.Steps {
				if step.State != v1.StepTerminated {
					t.Errorf("step %q of a run that ended %s is %s, want Terminated", step.Name, tc.reason, step.State)
				}
			}
			// The status landed: the Pod, which no step started, is deleted.
			testenv.Eventually(t, func() (bool, string) {
				return isNotFound(h.Key("unlucky-pod"), &corev1.Pod{}), "it still exists"
			}, "Pod unlucky-pod to be deleted")
		})
	}
}

// concurrentWriteLabel is the label writeBeforeEnding writes.
const concurrentWriteLabel = "test.minitask.dev/concurrent-write"

// writeBeforeEnding is a client that, before the first status patch ending a
// run with reason, writes a label to the run, as another client might at
// that moment: the patch, locked to the run as the reconcile read it, then
// fails with a Conflict, and the label's watch event reconciles the run
// again.
type writeBeforeEnding struct {
	client.Client
	reason v1.TaskRunReason
	done   atomic.Bool
}

func (c *writeBeforeEnding) Status() client.SubResourceWriter {
	return writeBeforeStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type writeBeforeStatus struct {
	client.SubResourceWriter
	c *writeBeforeEnding
}

func (s writeBeforeStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	run, ok := obj.(*v1.TaskRun)
	if ok {
		ended := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionSucceeded)
		if ended != nil && ended.Reason == string(s.c.reason) && s.c.done.CompareAndSwap(false, true) {
			label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+concurrentWriteLabel+`":"yes"}}}`))
			other := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Name}}
			if err := s.c.Patch(ctx, other, label); err != nil {
				return fmt.Errorf("the concurrent write: %w", err)
			}
		}
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}
