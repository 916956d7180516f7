package runpod

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file chooses a run's Pod's shape. Steps as init containers cost the
// kubelet's relist between two steps, a second on its defaults; chained,
// every step is a regular container that waits for the one before in its
// wrapper (internal/stepscript), and hands over in milliseconds
// (docs/lifecycle.md, "What a step costs"). The chained shape keeps every
// promise of the init containers' but where a step needs what only an init
// container gives, and the Pod then falls back, saying why.

// podLevelResourceNames are the resources a Pod may request once for all its
// containers (spec.resources, the PodLevelResources feature): cpu and memory.
// Hugepages are requested as limits, which would add up; ephemeral storage
// and extended resources cannot be requested so.
var podLevelResourceNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// fallbackReason returns why task's Pod cannot be chained, "" if it can.
// podLevelResources says that the API server keeps a Pod's spec.resources.
func fallbackReason(task *v1.Task, podLevelResources bool) string {
	steps := task.Spec.Steps
	for _, step := range steps {
		if step.Script != "" {
			continue
		}
		if len(step.Command) == 0 {
			return fmt.Sprintf("step %q runs its image's own entrypoint, which a step's wait cannot be put before", step.Name)
		}
		return fmt.Sprintf("step %q runs a command, not a script: its image may have no shell for the wait that chains steps", step.Name)
	}
	for _, step := range steps {
		if name, ok := unmovableResource(step); ok {
			return fmt.Sprintf("step %q asks for %s, which cannot pass from one step's container to the next", step.Name, name)
		}
	}
	for _, name := range requestedByMany(steps) {
		by := requesters(steps, name)
		if !slices.Contains(podLevelResourceNames, name) {
			return fmt.Sprintf("steps %s all request %s, which a Pod cannot request once for all its containers: as regular containers their requests would add up", strings.Join(by, ", "), name)
		}
		if !podLevelResources {
			return fmt.Sprintf("steps %s all request %s, and the API server keeps no Pod-level resources (the PodLevelResources feature) to request it once for all: as regular containers their requests would add up", strings.Join(by, ", "), name)
		}
	}
	return ""
}

// NeedsPodLevelResources reports whether task's chained Pod requests a
// resource once for all its steps: whether the API server must keep a Pod's
// spec.resources for it.
func NeedsPodLevelResources(task *v1.Task) bool {
	return len(task.Spec.Steps) > 1 && len(requestedByMany(task.Spec.Steps)) > 0
}

// unmovableResource returns a resource step asks for that is neither cpu,
// memory, hugepages nor ephemeral storage: a device (a GPU, say), allocated
// to the container that asks for it for the Pod's whole life.
func unmovableResource(step v1.Step) (corev1.ResourceName, bool) {
	if step.ComputeResources == nil {
		return "", false
	}
	for _, list := range []corev1.ResourceList{step.ComputeResources.Requests, step.ComputeResources.Limits} {
		for _, name := range slices.Sorted(maps.Keys(list)) {
			switch {
			case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage,
				strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			default:
				return name, true
			}
		}
	}
	return "", false
}

// stepRequests returns what step's container requests once the API server
// has defaulted it: its requests, and for a resource it only limits, the
// limit.
func stepRequests(step v1.Step) corev1.ResourceList {
	if step.ComputeResources == nil {
		return nil
	}
	requests := corev1.ResourceList{}
	for name, q := range step.ComputeResources.Limits {
		requests[name] = q
	}
	for name, q := range step.ComputeResources.Requests {
		requests[name] = q
	}
	return requests
}

// requestedByMany returns, sorted, the resources that more than one of steps
// requests (more than zero of): as regular containers, their requests would
// add up.
func requestedByMany(steps []v1.Step) []corev1.ResourceName {
	count := map[corev1.ResourceName]int{}
	for _, step := range steps {
		for name, q := range stepRequests(step) {
			if !q.IsZero() {
				count[name]++
			}
		}
	}
	var many []corev1.ResourceName
	for name, n := range count {
		if n > 1 {
			many = append(many, name)
		}
	}
	slices.Sort(many)
	return many
}

// requesters returns the quoted names of the steps that request name.
func requesters(steps []v1.Step, name corev1.ResourceName) []string {
	var by []string
	for _, step := range steps {
		if q, ok := stepRequests(step)[name]; ok && !q.IsZero() {
			by = append(by, fmt.Sprintf("%q", step.Name))
		}
	}
	return by
}

// applyPodLevelRequests makes the chained Pod of task request, for each
// resource that more than one step requests, the largest step's request,
// once (spec.resources), and its containers none of it: the steps run one at
// a time, as init containers did, whose requests the scheduler never added
// up. Each container keeps its limits; the API server would default a
// request from a limit, so the containers' requests are set to zero. The
// Task's sidecars run beside every step: what they request of such a
// resource is added to the Pod's, and stays their containers' own.
func applyPodLevelRequests(spec *corev1.PodSpec, task *v1.Task) {
	many := requestedByMany(task.Spec.Steps)
	if len(many) == 0 {
		return
	}
	largest := corev1.ResourceList{}
	for i, step := range task.Spec.Steps {
		requests := stepRequests(step)
		for _, name := range many {
			q, ok := requests[name]
			if !ok {
				continue
			}
			if max, seen := largest[name]; !seen || q.Cmp(max) > 0 {
				largest[name] = q.DeepCopy()
			}
			c := &spec.Containers[i]
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[name] = resource.MustParse("0")
		}
	}
	addSidecarRequests(largest, task)
	spec.Resources = &corev1.ResourceRequirements{Requests: largest}
}
