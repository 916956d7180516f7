package runpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestPodShape holds Build's choice of shape, for a manager that asks for
// chained Pods, to docs/lifecycle.md's table of fallbacks: each Task that
// cannot be chained gets init containers and the reason, every other one a
// chained Pod.
func TestPodShape(t *testing.T) {
	script := func(name string, resources *corev1.ResourceRequirements) v1.Step {
		return v1.Step{Name: name, Image: "alpine:3", Script: "true", ComputeResources: resources}
	}
	requests := func(name corev1.ResourceName, q string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: corev1.ResourceList{name: resource.MustParse(q)}}
	}
	limits := func(name corev1.ResourceName, q string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Limits: corev1.ResourceList{name: resource.MustParse(q)}}
	}
	tests := []struct {
		name              string
		steps             []v1.Step
		podLevelResources bool
		notChained        string
		// reason is the fallback's, "" for a chained Pod.
		reason string
	}{
		{name: "script steps", steps: []v1.Step{script("a", nil), script("b", nil)}, podLevelResources: true},
		{name: "a command step", steps: []v1.Step{script("a", nil), {Name: "b", Image: "golang:1", Command: []string{"go", "vet"}}},
			reason: `step "b" runs a command, not a script: its image may have no shell for the wait that chains steps`},
		{name: "an entrypoint step", steps: []v1.Step{{Name: "a", Image: "scanner:1"}, script("b", nil)},
			reason: `step "a" runs its image's own entrypoint, which a step's wait cannot be put before`},
		{name: "a device", steps: []v1.Step{script("a", nil), script("b", limits("nvidia.com/gpu", "1"))}, podLevelResources: true,
			reason: `step "b" asks for nvidia.com/gpu, which cannot pass from one step's container to the next`},
		{name: "one step requests ephemeral storage", steps: []v1.Step{script("a", requests(corev1.ResourceEphemeralStorage, "1Gi")), script("b", nil)}},
		{name: "two steps request ephemeral storage", podLevelResources: true,
			steps:  []v1.Step{script("a", requests(corev1.ResourceEphemeralStorage, "1Gi")), script("b", limits(corev1.ResourceEphemeralStorage, "2Gi"))},
			reason: `steps "a", "b" all request ephemeral-storage, which a Pod cannot request once for all its containers: as regular containers their requests would add up`},
		{name: "two steps request hugepages", podLevelResources: true,
			steps:  []v1.Step{script("a", limits("hugepages-2Mi", "64Mi")), script("b", limits("hugepages-2Mi", "64Mi"))},
			reason: `steps "a", "b" all request hugepages-2Mi, which a Pod cannot request once for all its containers: as regular containers their requests would add up`},
		{name: "two steps request cpu, Pod-level resources kept", podLevelResources: true,
			steps: []v1.Step{script("a", requests(corev1.ResourceCPU, "1")), script("b", requests(corev1.ResourceCPU, "2"))}},
		{name: "two steps request cpu, no Pod-level resources",
			steps:  []v1.Step{script("a", requests(corev1.ResourceCPU, "1")), script("b", requests(corev1.ResourceCPU, "2"))},
			reason: `steps "a", "b" all request cpu, and the API server keeps no Pod-level resources (the PodLevelResources feature) to request it once for all: as regular containers their requests would add up`},
		{name: "zero requests add nothing", steps: []v1.Step{script("a", requests(corev1.ResourceCPU, "0")), script("b", requests(corev1.ResourceCPU, "1"))}},
		{name: "refused by the namespace", steps: []v1.Step{script("a", nil), script("b", nil)}, notChained: "the namespace's LimitRange says no",
			reason: "the namespace's LimitRange says no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := wrappers.Task("ns", "t").Steps(tt.steps...).Obj()
			pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task,
				Inputs{Name: "run-pod", Chained: true, PodLevelResources: tt.podLevelResources, NotChained: tt.notChained})
			if err != nil {
				t.Fatal(err)
			}
			wantShape, wantInits := runstate.PodShapeChained, 0
			if tt.reason != "" {
				wantShape, wantInits = runstate.PodShapeInitContainers, len(tt.steps)-1
			}
			if got := pod.Annotations[runstate.AnnotationPodShape]; got != wantShape || len(pod.Spec.InitContainers) != wantInits {
				t.Errorf("Pod of shape %q with %d init containers, want %q with %d", got, len(pod.Spec.InitContainers), wantShape, wantInits)
			}
			if got := pod.Annotations[runstate.AnnotationPodShapeReason]; got != tt.reason {
				t.Errorf("shape reason %q, want %q", got, tt.reason)
			}
			if tt.reason == "" && NeedsPodLevelResources(task) != (pod.Spec.Resources != nil) {
				t.Errorf("NeedsPodLevelResources() = %t, but the chained Pod has spec.resources %v", NeedsPodLevelResources(task), pod.Spec.Resources)
			}
		})
	}
}
