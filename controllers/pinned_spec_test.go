package controllers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPinnedTaskSpec: a run pins its Task's spec at its first Pod, and
// every retry runs that spec, the Task edited and then deleted meanwhile;
// a run that gives its spec inline runs it, and pins it too.
func TestPinnedTaskSpec(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	evicted := func(w *wrappers.PodStatusWrapper) { w.Evicted(0, lowMemory) }

	task := twoSteps("t")
	// A step's timeout is pinned with the rest (a Duration, which keeps
	// its text; apis/v1's TestSemanticEqualityComparesDurations holds the
	// status write's comparison of it).
	task.Spec.Steps[1].Timeout = v1.NewDuration(time.Hour)
	h.Create(t, task, retrying(wrappers.TaskRun("", "pinned", "t").Obj(), 2))
	h.WaitForPod(t, "pinned-pod")
	h.waitForPin(t, "pinned", &task.Spec)
	h.checkScripts(t, "pinned-pod", "echo one", "echo edited")

	// Edited: the retry still runs what the first attempt ran.
	edited := task.DeepCopy()
	if err := env.Client.Get(context.Background(), h.Key("t"), edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.Steps[0].Script = "echo edited"
	if err := env.Client.Update(context.Background(), edited); err != nil {
		t.Fatalf("editing Task t: %v", err)
	}
	h.Kubelet(t, "pinned-pod", evicted)
	h.WaitForPod(t, "pinned-pod-retry1")
	h.checkScripts(t, "pinned-pod-retry1", "echo one", "echo edited")

	// Deleted: the run goes on, from its pin.
	if err := env.Client.Delete(context.Background(), edited); err != nil {
		t.Fatalf("deleting Task t: %v", err)
	}
	h.Kubelet(t, "pinned-pod-retry1", evicted)
	h.WaitForPod(t, "pinned-pod-retry2")
	h.checkScripts(t, "pinned-pod-retry2", "echo one", "echo edited")
	h.Kubelet(t, "pinned-pod-retry2", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	run := h.waitForCondition(t, "pinned", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if diff := cmp.Diff(&task.Spec, run.Status.TaskSpec); diff != "" {
		t.Errorf("status.taskSpec after the retries (-want +got):\n%s", diff)
	}

	// Inline: no Task at all.
	inline := wrappers.Task("", "unused").Step("only", "alpine:3", "echo inline").Obj().Spec
	h.Create(t, wrappers.TaskRun("", "inline", "").Inline(inline).Obj())
	h.checkScripts(t, "inline-pod", "echo inline", "echo one")
	h.Kubelet(t, "inline-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	run = h.waitForCondition(t, "inline", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
	if diff := cmp.Diff(&inline, run.Status.TaskSpec); diff != "" {
		t.Errorf("an inline run's status.taskSpec (-want +got):\n%s", diff)
	}
}

// waitForPin waits until the run's status.taskSpec is want.
func (h *harness) waitForPin(t *testing.T, name string, want *v1.TaskSpec) {
	t.Helper()
	testenv.Eventually(t, func() (bool, string) {
		diff := cmp.Diff(want, h.TaskRun(t, name).Status.TaskSpec)
		return diff == "", diff
	}, "TaskRun %s's status.taskSpec (-want +got)", name)
}

// checkScripts waits for the Pod and fails the test unless its containers
// hold has and not hasNot.
func (h *harness) checkScripts(t *testing.T, pod, has, hasNot string) {
	t.Helper()
	p := h.WaitForPod(t, pod)
	containers := append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...)
	raw, err := json.Marshal(containers)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(raw); !strings.Contains(text, has) || strings.Contains(text, hasNot) {
		t.Errorf("Pod %s's containers: want %q in them and %q not:\n%s", pod, has, hasNot, text)
	}
}
