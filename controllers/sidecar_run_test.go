package controllers_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestSidecarRun runs a Task with sidecar db: its Pod has it first among
// its init containers, status.sidecars follows it, a restart is an Event,
// and once the steps have ended while db runs on, the run has succeeded and
// its Pod is stopped (its deadline lowered), not left for the grace period.
func TestSidecarRun(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	task := wrappers.Task("", "t").Sidecars(v1.Sidecar{Name: "db", Image: "postgres:17"}).
		Step("first", "alpine:3", "echo one").Step("second", "alpine:3", "echo two").Obj()
	h.Create(t, task)
	h.Create(t, wrappers.TaskRun("", "svc", "t").Obj())

	pod := h.WaitForPod(t, "svc-pod")
	if names := runstate.NativeSidecars(pod); !slices.Equal(names, []string{"sidecar-db"}) || pod.Spec.InitContainers[0].Name != "sidecar-db" {
		t.Fatalf("Pod's native sidecars = %v, init containers %v; want sidecar-db first", names, pod.Spec.InitContainers)
	}
	h.Kubelet(t, "svc-pod", func(w *wrappers.PodStatusWrapper) { w.Running(1).SidecarRunning("db").SidecarRestarted("db", 1, 1) })
	testenv.Eventually(t, func() (bool, string) {
		run := h.TaskRun(t, "svc")
		s := run.Status.Sidecars
		ok := len(s) == 1 && s[0].Name == "db" && s[0].State == v1.StepRunning && s[0].RestartCount != nil && *s[0].RestartCount == 1
		return ok && slices.Contains(h.events(t, "svc"), "SidecarRestarted x1"), "status.sidecars " + fmtSidecars(s)
	}, "status.sidecars to report db running, restarted once, and an Event to say so")

	h.Kubelet(t, "svc-pod", func(w *wrappers.PodStatusWrapper) {
		w.Succeeded().Phase(corev1.PodRunning).SidecarRunning("db")
	})
	h.waitForCondition(t, "svc", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	testenv.Eventually(t, func() (bool, string) {
		p := &corev1.Pod{}
		if err := h.Env.Client.Get(t.Context(), h.Key("svc-pod"), p); err != nil {
			return false, err.Error()
		}
		return p.Spec.ActiveDeadlineSeconds != nil, "no activeDeadlineSeconds"
	}, "the Pod whose sidecar outlives its steps to be stopped")
}

// fmtSidecars is status.sidecars, for a message.
func fmtSidecars(states []v1.SidecarState) string {
	out := ""
	for _, s := range states {
		out += s.Name + ":" + string(s.State) + " "
	}
	return out
}
