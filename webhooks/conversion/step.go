package conversion

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
)

// stepLostFields are the fields of one v1 (and v1beta1) step that v1alpha1 cannot
// express, stashed under the step's name. A v1alpha1 writer may reorder its
// steps or edit their scripts and images; keyed by name, each step keeps
// what it had, and a step removed or renamed loses it.
type stepLostFields struct {
	Name             string                       `json:"name"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	WorkingDir       string                       `json:"workingDir,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	EnvFrom          []corev1.EnvFromSource       `json:"envFrom,omitempty"`
	ComputeResources *corev1.ResourceRequirements `json:"computeResources,omitempty"`
	OnError          v1.OnError                   `json:"onError,omitempty"`
}

// isEmpty reports whether the step has nothing v1alpha1 cannot express, so
// that it needs no entry in the stash.
func (s *stepLostFields) isEmpty() bool {
	return s.Command == nil && s.Args == nil && s.WorkingDir == "" &&
		s.Env == nil && s.EnvFrom == nil && s.ComputeResources == nil && s.OnError == ""
}

// stepsFromHub returns the v1alpha1 steps of steps, field by field, and the
// additions of those steps that have any, for the stash's v1beta1 and v1
// members (nil when none has).
func stepsFromHub(steps []v1.Step) ([]v1alpha1.Step, []stepLostFields, []stepV1Fields) {
	if steps == nil {
		return nil, nil, nil
	}
	spoke := make([]v1alpha1.Step, len(steps))
	var lost []stepLostFields
	var lostV1 []stepV1Fields
	for i := range steps {
		step := &steps[i]
		spoke[i] = v1alpha1.Step{Name: step.Name, Image: step.Image, Script: step.Script}
		additions := stepLostFields{
			Name:             step.Name,
			Command:          nilIfEmpty(step.Command),
			Args:             nilIfEmpty(step.Args),
			WorkingDir:       step.WorkingDir,
			Env:              nilIfEmpty(step.Env),
			EnvFrom:          nilIfEmpty(step.EnvFrom),
			ComputeResources: step.ComputeResources,
			OnError:          step.OnError,
		}
		if !additions.isEmpty() {
			lost = append(lost, additions)
		}
		if fields, ok := stepV1FieldsOf(step); ok {
			lostV1 = append(lostV1, fields)
		}
	}
	return spoke, lost, lostV1
}

// stepsToHub returns the v1 steps of steps, field by field, each with
// the additions stashed under its name in either member. The stash is indexed once (firstByName), so that
// merging stays linear in the number of steps.
func stepsToHub(steps []v1alpha1.Step, stashed []stepLostFields, stashedV1 []stepV1Fields) []v1.Step {
	if steps == nil {
		return nil
	}
	byName := firstByName(stashed, func(s *stepLostFields) string { return s.Name })
	v1ByName := firstByName(stashedV1, func(s *stepV1Fields) string { return s.Name })
	hub := make([]v1.Step, len(steps))
	for i := range steps {
		step := &steps[i]
		hub[i] = v1.Step{Name: step.Name, Image: step.Image, Script: step.Script}
		if additions, ok := byName[step.Name]; ok {
			hub[i].Command = additions.Command
			hub[i].Args = additions.Args
			hub[i].WorkingDir = additions.WorkingDir
			hub[i].Env = additions.Env
			hub[i].EnvFrom = additions.EnvFrom
			hub[i].ComputeResources = additions.ComputeResources
			hub[i].OnError = additions.OnError
		}
		restoreStepV1Fields(&hub[i], v1ByName)
	}
	return hub
}
