package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestConditionTable reaches every row of the Succeeded condition's table
// (docs/lifecycle.md) through the API server, playing the kubelet and the
// user, and asserts each row's reason and message.
func TestConditionTable(t *testing.T) {
	h := newHarness(t)

	// The first row: a run the controller has not seen has no condition.
	h.Create(t, twoSteps("unseen"), wrappers.TaskRun("", "unseen", "unseen").Obj())
	if got := succeededCondition(h.TaskRun(t, "unseen")); got != (condition{}) {
		t.Errorf("TaskRun not yet seen has condition %+v, want none", got)
	}
	h.startController(t, time.Hour)
	h.waitForCondition(t, "unseen", condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "unseen-pod" has not started a step yet`})

	tests := map[string]struct {
		// task is created before the run; nil means none.
		task *v1.Task
		run  *v1.TaskRun
		// act plays the kubelet or the user once the run exists.
		act  func(t *testing.T, h *harness)
		want condition
		// check asserts more once the run has reached want.
		check func(t *testing.T, h *harness)
	}{
		"pending": {
			task: twoSteps("pending"),
			run:  wrappers.TaskRun("", "pending", "pending").Obj(),
			act:  func(t *testing.T, h *harness) { h.WaitForPod(t, "pending-pod") },
			want: condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "pending-pod" has not started a step yet`},
		},
		"waiting-for-task": {
			run:  wrappers.TaskRun("", "waiting-for-task", "absent").Obj(),
			want: condition{metav1.ConditionUnknown, v1.ReasonWaitingForTask, `waiting for Task "absent", which does not exist`},
		},
		"running": {
			task: twoSteps("running"),
			run:  wrappers.TaskRun("", "running", "running").Obj(),
			act:  kubeletSays("running-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) }),
			want: condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`},
		},
		"succeeded": {
			task: twoSteps("succeeded"),
			run:  wrappers.TaskRun("", "succeeded", "succeeded").Obj(),
			act:  kubeletSays("succeeded-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() }),
			want: condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"},
			check: func(t *testing.T, h *harness) {
				run := h.TaskRun(t, "succeeded")
				if run.Status.CompletionTime == nil || run.Status.StartTime == nil {
					t.Errorf("finished run has startTime %v and completionTime %v, want both", run.Status.StartTime, run.Status.CompletionTime)
				}
			},
		},
		"step-failed": {
			task: twoSteps("step-failed"),
			run:  wrappers.TaskRun("", "step-failed", "step-failed").Obj(),
			act:  kubeletSays("step-failed-pod", func(w *wrappers.PodStatusWrapper) { w.StepFailed(0, 3) }),
			want: condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "first" exited with code 3`},
		},
		"timeout-running": {
			task: twoSteps("timeout-running"),
			run:  wrappers.TaskRun("", "timeout-running", "timeout-running").Timeout(2 * time.Second).Obj(),
			act:  kubeletSays("timeout-running-pod", func(w *wrappers.PodStatusWrapper) { w.Running(1) }),
			want: condition{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "timeout-running" did not finish within 2s`},
			check: func(t *testing.T, h *harness) {
				pod := h.WaitForPod(t, "timeout-running-pod")
				if ads := pod.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 2 {
					t.Errorf("Pod of a 2s run has activeDeadlineSeconds %v, want at most 2", ads)
				}
				// The step it stopped is reported stopped, not running forever.
				checkSteps(t, h.TaskRun(t, "timeout-running"), "first=Terminated/Completed", "second=Terminated/TaskRunTimeout")
			},
		},
		"timeout-waiting-for-task": {
			run:  wrappers.TaskRun("", "timeout-waiting-for-task", "absent").Timeout(time.Second).Obj(),
			want: condition{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "timeout-waiting-for-task" did not finish within 1s`},
		},
		"cancel-running": {
			task: twoSteps("cancel-running"),
			run:  wrappers.TaskRun("", "cancel-running", "cancel-running").Obj(),
			act: func(t *testing.T, h *harness) {
				kubeletSays("cancel-running-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })(t, h)
				h.waitForCondition(t, "cancel-running", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
				h.UpdateTaskRun(t, "cancel-running", func(r *v1.TaskRun) { r.Spec.Status = v1.TaskRunSpecStatusCancelled })
			},
			want: condition{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "cancel-running" was cancelled`},
			check: func(t *testing.T, h *harness) {
				// Stopped, not deleted: its deadline now lies in the past.
				pod := h.WaitForPod(t, "cancel-running-pod")
				if ads := pod.Spec.ActiveDeadlineSeconds; ads == nil || *ads > 5 {
					t.Errorf("cancelled Pod has activeDeadlineSeconds %v, want it lowered to the seconds since it started", ads)
				}
				checkSteps(t, h.TaskRun(t, "cancel-running"), "first=Terminated/TaskRunCancelled", "second=Terminated/TaskRunCancelled")
			},
		},
		"cancel-pending": {
			task: twoSteps("cancel-pending"),
			run:  wrappers.TaskRun("", "cancel-pending", "cancel-pending").Obj(),
			act: func(t *testing.T, h *harness) {
				h.WaitForPod(t, "cancel-pending-pod")
				h.UpdateTaskRun(t, "cancel-pending", func(r *v1.TaskRun) { r.Spec.Status = v1.TaskRunSpecStatusCancelled })
			},
			want: condition{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "cancel-pending" was cancelled`},
			check: func(t *testing.T, h *harness) {
				// It never started: nothing to keep, so it is deleted.
				testenv.Eventually(t, func() (bool, string) {
					return isNotFound(h.Key("cancel-pending-pod"), &corev1.Pod{}), "it still exists"
				}, "Pod cancel-pending-pod to be deleted")
			},
		},
		"cancel-before-start": {
			task: twoSteps("cancel-before-start"),
			run:  wrappers.TaskRun("", "cancel-before-start", "cancel-before-start").Cancelled().Obj(),
			want: condition{metav1.ConditionFalse, v1.ReasonCancelled, `TaskRun "cancel-before-start" was cancelled`},
			check: func(t *testing.T, h *harness) {
				if pods := h.pods(t, "cancel-before-start"); len(pods) != 0 {
					t.Errorf("a run cancelled before it started has %d Pods", len(pods))
				}
			},
		},
		"invalid-params": {
			task: wrappers.Task("", "invalid-params").Param("zeta").ParamDefault("mid", "m").Param("alpha").
				Step("only", "alpine:3", "echo $(params.zeta) $(params.alpha) $(params.mid)").Obj(),
			run:  wrappers.TaskRun("", "invalid-params", "invalid-params").Param("undeclared", "x").Obj(),
			want: condition{metav1.ConditionFalse, v1.ReasonInvalidParams, `missing values for params with no default: alpha, zeta`},
			check: func(t *testing.T, h *harness) {
				if pods := h.pods(t, "invalid-params"); len(pods) != 0 {
					t.Errorf("a run with invalid params has %d Pods", len(pods))
				}
			},
		},
		"invalid-params-type": {
			// v1's typed params: a run's value of another type than its
			// Task declares, or an object's value lacking a declared key,
			// reaches the controller (admission cannot know the Task) and
			// ends the run before any Pod.
			task: wrappers.Task("", "invalid-params-type").Params(
				v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
				v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}}},
			).Step("only", "$(params.image.repo)", "true").Obj(),
			run: wrappers.TaskRun("", "invalid-params-type", "invalid-params-type").Params(
				v1.Param{Name: "files", Value: *v1.NewStringValue("a.go b.go")},
				v1.Param{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r"})},
			).Obj(),
			want: condition{metav1.ConditionFalse, v1.ReasonInvalidParams,
				`param "files": its value is a string, but the param is an array; param "image": its value lacks the keys the param declares: tag`},
			check: func(t *testing.T, h *harness) {
				if pods := h.pods(t, "invalid-params-type"); len(pods) != 0 {
					t.Errorf("a run with invalid params has %d Pods", len(pods))
				}
			},
		},
		"pending-timeout": {
			// The Pod is never scheduled here (no kubelet plays it): past
			// timeouts.pending the run ends, naming what held it, and its
			// Pod, which started no step, is deleted.
			task: twoSteps("pending-timeout"),
			run: func() *v1.TaskRun {
				r := wrappers.TaskRun("", "pending-timeout", "pending-timeout").Obj()
				r.Spec.Timeouts.Pending = v1.NewDuration(2 * time.Second)
				return r
			}(),
			want: condition{metav1.ConditionFalse, v1.ReasonPendingTimeout,
				`TaskRun "pending-timeout" did not start its first step within 2s (spec.timeouts.pending): Pod "pending-timeout-pod" has not started a step yet`},
			check: func(t *testing.T, h *harness) {
				testenv.Eventually(t, func() (bool, string) {
					return isNotFound(h.Key("pending-timeout-pod"), &corev1.Pod{}), "it still exists"
				}, "the Pod of a run that ended PendingTimeout to be deleted")
			},
		},
		"pending-timeout-no-task": {
			run: func() *v1.TaskRun {
				r := wrappers.TaskRun("", "pending-timeout-no-task", "absent").Obj()
				r.Spec.Timeouts.Pending = v1.NewDuration(time.Second)
				return r
			}(),
			want: condition{metav1.ConditionFalse, v1.ReasonPendingTimeout,
				`TaskRun "pending-timeout-no-task" did not start its first step within 1s (spec.timeouts.pending): waiting for Task "absent", which does not exist`},
		},
		"pod-deleted": {
			task: twoSteps("pod-deleted"),
			run:  wrappers.TaskRun("", "pod-deleted", "pod-deleted").Obj(),
			// The controller may see the Pod marked for deletion, or already
			// gone; TestPodGoneWhileControllerDown covers the latter for sure.
			act:  deletePodWhileRunning("pod-deleted"),
			want: condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "pod-deleted-pod" was deleted before the run finished`},
		},
		"evicted": {
			task: twoSteps("evicted"),
			run:  wrappers.TaskRun("", "evicted", "evicted").Obj(),
			act:  kubeletSays("evicted-pod", func(w *wrappers.PodStatusWrapper) { w.Evicted(1, "The node was low on resource: memory.") }),
			want: condition{metav1.ConditionFalse, v1.ReasonPodFailed, `Pod "evicted-pod" was evicted: The node was low on resource: memory.`},
		},
		"deadline-not-ours": {
			task: twoSteps("deadline-not-ours"),
			run:  wrappers.TaskRun("", "deadline-not-ours", "deadline-not-ours").Timeout(0).Obj(),
			act:  kubeletSays("deadline-not-ours-pod", func(w *wrappers.PodStatusWrapper) { w.DeadlineExceeded(0) }),
			want: condition{metav1.ConditionFalse, v1.ReasonPodFailed,
				`Pod "deadline-not-ours-pod" failed (DeadlineExceeded): Pod was active on the node longer than the specified deadline`},
		},
		"rejected-image": {
			// Valid as a Task, but the value makes an image with trailing
			// whitespace, which Pod validation rejects.
			task: wrappers.Task("", "rejected-image").Param("tag").Step("only", "alpine:$(params.tag)", "").Obj(),
			run:  wrappers.TaskRun("", "rejected-image", "rejected-image").Param("tag", "3 ").Obj(),
			want: condition{metav1.ConditionFalse, v1.ReasonPodFailed, `the API server rejected the Pod: Pod "rejected-image-pod" is invalid: ` +
				`spec.containers[0].image: Invalid value: "alpine:3 ": must not have leading or trailing whitespace`},
			check: func(t *testing.T, h *harness) {
				if got := len(h.writes.of("rejected-image-pod")); got > 3 {
					t.Errorf("the controller tried %d times to create a Pod the API server rejects, want at most 3", got)
				}
			},
		},
		"long-step-names": {
			// A step name may have 63 characters, a container name too: the
			// containers get shortened names, and the run still names its steps.
			task: wrappers.Task("", "long-step-names").Step(longStep, "alpine:3", "").Step(strings.Repeat("t", 59), "alpine:3", "").Obj(),
			run:  wrappers.TaskRun("", "long-step-names", "long-step-names").Obj(),
			act:  kubeletSays("long-step-names-pod", func(w *wrappers.PodStatusWrapper) { w.Running(1) }),
			want: condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "` + strings.Repeat("t", 59) + `" (2 of 2)`},
			check: func(t *testing.T, h *harness) {
				checkSteps(t, h.TaskRun(t, "long-step-names"), longStep+"=Terminated/Completed", strings.Repeat("t", 59)+"=Running/")
			},
		},
		"failed-by-v1alpha1": {
			run: wrappers.TaskRun("", "failed-by-v1alpha1", "failed-by-v1alpha1").Obj(),
			act: func(t *testing.T, h *harness) {
				h.waitForCondition(t, "failed-by-v1alpha1", condition{metav1.ConditionUnknown, v1.ReasonWaitingForTask,
					`waiting for Task "failed-by-v1alpha1", which does not exist`})
				setAlphaPhase(t, h, "failed-by-v1alpha1", v1alpha1.TaskRunPhaseFailed)
				// The Task appears too late: the run is final.
				h.Create(t, twoSteps("failed-by-v1alpha1"))
			},
			want: condition{metav1.ConditionFalse, v1.ReasonFailed, ""},
			check: func(t *testing.T, h *harness) {
				consistently(t, 2*time.Second, func() (bool, string) {
					return len(h.pods(t, "failed-by-v1alpha1")) == 0, "a Pod was created"
				})
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc.task != nil {
				h.Create(t, tc.task)
			}
			h.Create(t, tc.run)
			if tc.act != nil {
				tc.act(t, h)
			}
			h.waitForCondition(t, tc.run.Name, tc.want)
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

// checkSteps asserts run's status.steps, each as NAME=STATE/REASON.
func checkSteps(t *testing.T, run *v1.TaskRun, want ...string) {
	t.Helper()
	var got []string
	for _, step := range run.Status.Steps {
		got = append(got, step.Name+"="+string(step.State)+"/"+step.Reason)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TaskRun %s: status.steps mismatch (-want +got):\n%s", run.Name, diff)
	}
}

// longStep is a step name of the greatest length allowed.
var longStep = strings.Repeat("s", 63)

// twoSteps is a Task with two steps, first and second.
func twoSteps(name string) *v1.Task {
	return wrappers.Task("", name).Step("first", "alpine:3", "echo one").Step("second", "alpine:3", "echo two").Obj()
}

// kubeletSays waits for a Pod and writes the status that set builds, as a
// step of a table's case.
func kubeletSays(pod string, set func(*wrappers.PodStatusWrapper)) func(*testing.T, *harness) {
	return func(t *testing.T, h *harness) {
		h.Kubelet(t, pod, set)
	}
}

// deletePodWhileRunning lets the run's Pod start its first step, then deletes it.
func deletePodWhileRunning(run string) func(*testing.T, *harness) {
	return func(t *testing.T, h *harness) {
		kubeletSays(run+"-pod", func(w *wrappers.PodStatusWrapper) { w.Running(0) })(t, h)
		h.waitForCondition(t, run, condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "first" (1 of 2)`})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: run + "-pod"}}
		if err := env.Client.Delete(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
}

// setAlphaPhase writes a TaskRun's phase as a v1alpha1 client would.
func setAlphaPhase(t *testing.T, h *harness, name string, phase v1alpha1.TaskRunPhase) {
	t.Helper()
	run := &v1alpha1.TaskRun{}
	if err := env.Client.Get(context.Background(), h.Key(name), run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = phase
	if err := env.Client.Status().Update(context.Background(), run); err != nil {
		t.Fatalf("setting phase %s through v1alpha1: %v", phase, err)
	}
}

// consistently fails the test if check reports false at any point during d.
func consistently(t *testing.T, d time.Duration, check func() (bool, string)) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok, why := check(); !ok {
			t.Fatal(why)
		}
	}
}

// TestDefaultTimeout checks --default-timeout: it bounds a run without
// spec.timeout, not one whose timeout is 0s; and that a run ending in a
// failure is counted under its reason.
func TestDefaultTimeout(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Second)
	timedOutBefore := metricValue(t, "minitask_taskruns_total", "TaskRunTimeout")

	h.Create(t, wrappers.TaskRun("", "defaulted", "absent").Obj(), wrappers.TaskRun("", "unbounded", "absent").Timeout(0).Obj())
	h.waitForCondition(t, "defaulted", condition{metav1.ConditionFalse, v1.ReasonTimeout, `TaskRun "defaulted" did not finish within 1s`})
	want := condition{metav1.ConditionUnknown, v1.ReasonWaitingForTask, `waiting for Task "absent", which does not exist`}
	if got := succeededCondition(h.TaskRun(t, "unbounded")); got != want {
		t.Errorf("run with timeout 0s, after the default timeout passed: %+v, want %+v", got, want)
	}
	if got := metricValue(t, "minitask_taskruns_total", "TaskRunTimeout") - timedOutBefore; got != 1 {
		t.Errorf("minitask_taskruns_total{reason=TaskRunTimeout} grew by %v, want 1", got)
	}
}

// TestPodForbiddenByAdmission creates a run in a namespace whose Pod
// Security level its Pod breaks (the controller fills in what the restricted
// level requires, but the run's podTemplate asks to run as root, and what it
// sets wins): admission forbids the Pod every time, so the run ends
// PodConfigFailed with Pod Security's message, after at most 3 attempts.
func TestPodForbiddenByAdmission(t *testing.T) {
	h := newHarness(t)
	h.labelNamespace(t, "restricted")
	h.startController(t, time.Hour)
	h.Create(t, twoSteps("forbidden"), wrappers.TaskRun("", "forbidden", "forbidden").
		PodTemplate(v1.PodTemplate{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}}).Obj())

	var got condition
	testenv.Eventually(t, func() (bool, string) {
		got = succeededCondition(h.TaskRun(t, "forbidden"))
		return got.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", got)
	}, "TaskRun forbidden to fail")
	wantPrefix := `Pod "forbidden-pod" asks for what its namespace's Pod Security level forbids: violates PodSecurity "restricted:latest"`
	if got.Reason != v1.ReasonPodConfigFailed || !strings.HasPrefix(got.Message, wantPrefix) {
		t.Errorf("condition %+v, want PodConfigFailed with a message starting %q", got, wantPrefix)
	}
	if n := len(h.writes.of("forbidden-pod")); n > 3 {
		t.Errorf("the controller tried %d times to create a Pod that admission forbids, want at most 3", n)
	}
}
