package controllers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
)

// chainedShape configures the controller as --pod-shape=chained does.
func chainedShape(r *controllers.TaskRunReconciler) { r.PodShape = runstate.PodShapeChained }

// requestingSteps is a Task of three script steps, two of which request
// cpu and memory: as regular containers, their requests would add up.
func requestingSteps(name string) *v1.Task {
	requests := func(cpu, memory string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	}
	return wrappers.Task("", name).Steps(
		v1.Step{Name: "a", Image: "alpine:3", Script: "echo a", ComputeResources: requests("500m", "256Mi")},
		v1.Step{Name: "b", Image: "alpine:3", Script: "echo b", ComputeResources: requests("1", "128Mi")},
		v1.Step{Name: "c", Image: "alpine:3", Script: "echo c"},
	).Obj()
}

// TestChainedRun runs a run through a chained Pod on a real API server: the
// Pod it accepts requests the largest step's cpu and memory once, its
// containers none; the run says which step runs while every container runs;
// a failed step ends the run at once, while the Pod goes on, and the
// controller stops that Pod, keeping its logs.
func TestChainedRun(t *testing.T) {
	h := newHarness(t)
	h.Create(t, requestingSteps("chained"), wrappers.TaskRun("", "chained", "chained").Obj())
	h.startControllerWith(t, chainedShape)

	pod := h.WaitForPod(t, "chained-pod")
	if !runstate.Chained(pod) || len(pod.Spec.InitContainers) != 0 || len(pod.Spec.Containers) != 3 {
		t.Fatalf("Pod has annotations %v, %d init containers and %d containers, want a chained Pod of 3 containers",
			pod.Annotations, len(pod.Spec.InitContainers), len(pod.Spec.Containers))
	}
	wantRequests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	if pod.Spec.Resources == nil || !equalResources(pod.Spec.Resources.Requests, wantRequests) {
		t.Errorf("Pod requests %v, want the largest step's, %v", pod.Spec.Resources, wantRequests)
	}
	for _, c := range pod.Spec.Containers[:2] {
		if cpu := c.Resources.Requests[corev1.ResourceCPU]; !cpu.IsZero() {
			t.Errorf("container %s requests cpu %s, want 0: the Pod requests it once", c.Name, cpu.String())
		}
	}

	h.Kubelet(t, "chained-pod", func(w *wrappers.PodStatusWrapper) { w.Running(1) })
	run := h.waitForCondition(t, "chained", condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "b" (2 of 3)`})
	checkSteps(t, run, "a=Terminated/Completed", "b=Running/", "c=Waiting/")

	// b fails; c's container still runs, its turn never to come.
	h.Kubelet(t, "chained-pod", func(w *wrappers.PodStatusWrapper) {
		w.Running(2).Ended(1, 3, `{"exitCode":3,"results":{}}`).Phase(corev1.PodRunning)
	})
	run = h.waitForCondition(t, "chained", condition{metav1.ConditionFalse, v1.ReasonStepFailed, `step "b" exited with code 3`})
	checkSteps(t, run, "a=Terminated/Completed", "b=Terminated/Error", "c=Waiting/")
	testenv.Eventually(t, func() (bool, string) {
		pod := h.WaitForPod(t, "chained-pod")
		ads := pod.Spec.ActiveDeadlineSeconds
		return ads != nil && *ads < 3600, "activeDeadlineSeconds " + formatSeconds(ads)
	}, "the Pod of the failed run stopped by its lowered activeDeadlineSeconds")
}

// TestChainedRunWithoutPodLevelResources runs the same Task on an API
// server without Pod-level resources (the PodLevelResources feature off),
// which would drop the Pod's spec.resources: the Pod falls back to init
// containers and says why.
func TestChainedRunWithoutPodLevelResources(t *testing.T) {
	h := newHarnessOn(t, testenv.ForTest(t, webhooks.SetupWithManager, testenv.WithAPIServerFeatureGates(podLevelResourcesOff)))
	h.Create(t, requestingSteps("fallback"), wrappers.TaskRun("", "fallback", "fallback").Obj())
	h.startControllerWith(t, chainedShape)

	pod := h.WaitForPod(t, "fallback-pod")
	got := map[string]string{"shape": pod.Annotations[runstate.AnnotationPodShape], "reason": pod.Annotations[runstate.AnnotationPodShapeReason]}
	want := map[string]string{"shape": runstate.PodShapeInitContainers,
		"reason": `steps "a", "b" all request cpu, and the API server keeps no Pod-level resources (the PodLevelResources feature) to request it once for all: as regular containers their requests would add up`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pod shape annotations (-want +got):\n%s", diff)
	}
	if len(pod.Spec.InitContainers) != 2 || pod.Spec.Resources != nil {
		t.Errorf("Pod has %d init containers and resources %v, want 2 and none", len(pod.Spec.InitContainers), pod.Spec.Resources)
	}
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if q.Cmp(b[name]) != 0 {
			return false
		}
	}
	return true
}

func formatSeconds(s *int64) string {
	if s == nil {
		return "none"
	}
	return time.Duration(*s * int64(time.Second)).String()
}

// podLevelResourcesOff turns the PodLevelResources feature off in an API
// server of Kubernetes 1.37, with the features that need it on.
const podLevelResourcesOff = "PodLevelResources=false,PodLevelResourcesFixDefaulting=false," +
	"PodLevelResourcesFixKubeletQOSClass=false,InPlacePodLevelResourcesVerticalScaling=false,PodLevelResourceManagers=false"

// TestChainedRunUnderLimitRange runs the same Task in a namespace whose
// LimitRange asks every container for at least 10m of cpu: the chained
// Pod's containers, which request nothing of what the Pod requests once, are
// refused, and the Pod is made again with init containers, saying why.
func TestChainedRunUnderLimitRange(t *testing.T) {
	h := newHarness(t)
	h.Create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "containers"}, Spec: corev1.LimitRangeSpec{
		Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Min:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}}}})
	h.Create(t, requestingSteps("limited"), wrappers.TaskRun("", "limited", "limited").Obj())
	h.startControllerWith(t, chainedShape)

	pod := h.WaitForPod(t, "limited-pod")
	if shape := pod.Annotations[runstate.AnnotationPodShape]; shape != runstate.PodShapeInitContainers || len(pod.Spec.InitContainers) != 2 {
		t.Fatalf("Pod has shape %q and %d init containers, want init containers, 2", shape, len(pod.Spec.InitContainers))
	}
	reason := pod.Annotations[runstate.AnnotationPodShapeReason]
	if !strings.Contains(reason, "LimitRange refuses the zero requests") || !strings.Contains(reason, "minimum cpu usage per Container is 10m") {
		t.Errorf("Pod's shape reason is %q, want the LimitRange's refusal", reason)
	}
	h.Kubelet(t, "limited-pod", func(w *wrappers.PodStatusWrapper) { w.Succeeded() })
	h.waitForCondition(t, "limited", condition{metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0"})
}
