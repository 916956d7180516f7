package conversion

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Release 7's fields (API.md, "Release 7") are v1's alone: neither spoke
// expresses a step's securityContext, imagePullPolicy or timeout, a Task's
// stepTemplate or sidecars, a run's inline taskSpec, or its status.taskSpec
// and status.sidecars. They ride in the stash's v1 member, on objects of
// either spoke, a step's by its name as release 3's additions do.

// stepV1Fields are the fields of one v1 step that neither spoke expresses,
// stashed under the step's name.
type stepV1Fields struct {
	Name            string                  `json:"name"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	ImagePullPolicy v1.PullPolicy           `json:"imagePullPolicy,omitempty"`
	Timeout         *v1.Duration            `json:"timeout,omitempty"`
}

// isEmpty reports whether the step has nothing only v1 expresses.
func (s *stepV1Fields) isEmpty() bool {
	return s.SecurityContext == nil && s.ImagePullPolicy == "" && s.Timeout == nil
}

// stepV1FieldsOf returns what only v1 expresses of step, and whether there
// is any.
func stepV1FieldsOf(step *v1.Step) (stepV1Fields, bool) {
	fields := stepV1Fields{
		Name:            step.Name,
		SecurityContext: step.SecurityContext,
		ImagePullPolicy: step.ImagePullPolicy,
		Timeout:         step.Timeout,
	}
	return fields, !fields.isEmpty()
}

// restoreStepV1Fields sets on step what was stashed under its name.
func restoreStepV1Fields(step *v1.Step, byName map[string]*stepV1Fields) {
	if fields, ok := byName[step.Name]; ok {
		step.SecurityContext = fields.SecurityContext
		step.ImagePullPolicy = fields.ImagePullPolicy
		step.Timeout = fields.Timeout
	}
}

// betaStepsFromHub returns steps as v1beta1 holds them, field by field, and
// what only v1 expresses of those steps that have any (nil when none has).
func betaStepsFromHub(steps []v1.Step) ([]v1beta1.Step, []stepV1Fields) {
	if steps == nil {
		return nil, nil
	}
	spoke := make([]v1beta1.Step, len(steps))
	var lost []stepV1Fields
	for i := range steps {
		s := &steps[i]
		spoke[i] = v1beta1.Step{
			Name:             s.Name,
			Image:            s.Image,
			Script:           s.Script,
			Command:          s.Command,
			Args:             s.Args,
			WorkingDir:       s.WorkingDir,
			Env:              s.Env,
			EnvFrom:          s.EnvFrom,
			ComputeResources: s.ComputeResources,
			OnError:          v1beta1.OnError(s.OnError),
		}
		if fields, ok := stepV1FieldsOf(s); ok {
			lost = append(lost, fields)
		}
	}
	return spoke, lost
}

// betaStepsToHub returns v1beta1 steps as v1 holds them, each with what was
// stashed under its name.
func betaStepsToHub(steps []v1beta1.Step, stashed []stepV1Fields) []v1.Step {
	if steps == nil {
		return nil
	}
	byName := firstByName(stashed, func(s *stepV1Fields) string { return s.Name })
	hub := make([]v1.Step, len(steps))
	for i := range steps {
		s := &steps[i]
		hub[i] = v1.Step{
			Name:             s.Name,
			Image:            s.Image,
			Script:           s.Script,
			Command:          s.Command,
			Args:             s.Args,
			WorkingDir:       s.WorkingDir,
			Env:              s.Env,
			EnvFrom:          s.EnvFrom,
			ComputeResources: s.ComputeResources,
			OnError:          v1.OnError(s.OnError),
		}
		restoreStepV1Fields(&hub[i], byName)
	}
	return hub
}

// InlineTaskRef is the taskRef a spoke shows for a v1 run that gives a
// taskSpec instead: both spokes require a taskRef, and a run valid in v1
// must read as one valid in each spoke. It is no name a Task can have (not
// a DNS-1123 subdomain), so it never names a Task of the run's namespace,
// and it says where the Task is. Converting back, a spoke's run whose
// taskRef is this name and whose stash holds a taskSpec has no taskRef.
const InlineTaskRef = "(taskSpec)"

// spokeTaskRefName is the taskRef a spoke holds for run's spec.
func spokeTaskRefName(spec *v1.TaskRunSpec) string {
	if spec.TaskRef.Name == "" && spec.TaskSpec != nil {
		return InlineTaskRef
	}
	return spec.TaskRef.Name
}

// hubTaskRef is the v1 taskRef of a spoke's taskRef name, given the
// stashed taskSpec: none for InlineTaskRef beside a taskSpec.
func hubTaskRef(name string, taskSpec *v1.TaskSpec) v1.TaskRef {
	if name == InlineTaskRef && taskSpec != nil {
		return v1.TaskRef{}
	}
	return v1.TaskRef{Name: name}
}

// taskRunStatusV1Fields are the TaskRun status fields only v1 expresses.
type taskRunStatusV1Fields struct {
	TaskSpec *v1.TaskSpec      `json:"taskSpec,omitempty"`
	Sidecars []v1.SidecarState `json:"sidecars,omitempty"`
}

// betaStatusFromHub returns status as v1beta1 holds it, and what only v1
// expresses of it.
func betaStatusFromHub(status *v1.TaskRunStatus) (v1beta1.TaskRunStatus, taskRunStatusV1Fields) {
	return v1beta1.TaskRunStatus{
			Conditions:     status.Conditions,
			PodName:        status.PodName,
			StartTime:      status.StartTime,
			CompletionTime: status.CompletionTime,
			Steps:          sameShapeSlice[v1beta1.StepState](status.Steps),
			Results:        sameShapeSlice[v1beta1.RunResult](status.Results),
			Attempts:       sameShapeSlice[v1beta1.Attempt](status.Attempts),
		}, taskRunStatusV1Fields{
			TaskSpec: status.TaskSpec,
			Sidecars: nilIfEmpty(status.Sidecars),
		}
}

// betaStatusToHub returns a v1beta1 status as v1 holds it, with what was
// stashed.
func betaStatusToHub(status *v1beta1.TaskRunStatus, stashed *taskRunStatusV1Fields) v1.TaskRunStatus {
	return v1.TaskRunStatus{
		Conditions:     status.Conditions,
		PodName:        status.PodName,
		StartTime:      status.StartTime,
		CompletionTime: status.CompletionTime,
		Steps:          sameShapeSlice[v1.StepState](status.Steps),
		Results:        sameShapeSlice[v1.RunResult](status.Results),
		Attempts:       sameShapeSlice[v1.Attempt](status.Attempts),
		TaskSpec:       stashed.TaskSpec,
		Sidecars:       stashed.Sidecars,
	}
}
