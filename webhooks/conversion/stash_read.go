package conversion

import (
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// A v1alpha1 TaskRun's stash is read into the types below, which are
// taskRunLostFields' with every time a stashTime: a time read by its own
// method, where metav1.Time needs timeReading, an unmarshaler option with
// which the codec looks up every value's type among the unmarshalers. That
// lookup was a tenth of the stash's decode, the largest part of converting
// a v1alpha1 run. Each type has its v1 type's layout and JSON
// (TestStashReadTypesAreIdentical), and is reinterpreted as it
// (sameShapeSlice) once read. Stashes are written with the v1 types.

// stashTime is metav1.Time, read as timeReading reads it.
type stashTime metav1.Time

// UnmarshalJSONFrom reads the time as unmarshalTime does.
func (t *stashTime) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTime(dec, (*metav1.Time)(t))
}

// stashCondition is metav1.Condition as the stash is read.
type stashCondition struct {
	Type               string                 `json:"type"`
	Status             metav1.ConditionStatus `json:"status"`
	ObservedGeneration int64                  `json:"observedGeneration,omitempty"`
	LastTransitionTime stashTime              `json:"lastTransitionTime"`
	Reason             string                 `json:"reason"`
	Message            string                 `json:"message"`
}

// stashStepState is v1.StepState as the stash is read.
type stashStepState struct {
	Name       string                `json:"name"`
	State      v1.StepContainerState `json:"state,omitempty"`
	ExitCode   *int32                `json:"exitCode,omitempty"`
	Reason     string                `json:"reason,omitempty"`
	StartedAt  *stashTime            `json:"startedAt,omitempty"`
	FinishedAt *stashTime            `json:"finishedAt,omitempty"`
}

// stashAttempt is v1.Attempt as the stash is read.
type stashAttempt struct {
	PodName        string     `json:"podName,omitempty"`
	StartTime      *stashTime `json:"startTime,omitempty"`
	CompletionTime *stashTime `json:"completionTime,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	Message        string     `json:"message,omitempty"`
}

// stashReadPairs are the types above and the v1 types they are read as,
// for TestStashReadTypesAreIdentical.
var stashReadPairs = [][2]any{
	{stashTime{}, metav1.Time{}},
	{stashCondition{}, metav1.Condition{}},
	{stashStepState{}, v1.StepState{}},
	{stashAttempt{}, v1.Attempt{}},
}

// taskRunLostFieldsRead is taskRunLostFields as the stash is read.
type taskRunLostFieldsRead struct {
	Spec   taskRunSpecLostFields       `json:"spec,omitzero"`
	Status taskRunStatusLostFieldsRead `json:"status,omitzero"`
}

type taskRunStatusLostFieldsRead struct {
	Conditions []stashCondition `json:"conditions,omitempty"`
	Steps      []stashStepState `json:"steps,omitempty"`
	Results    []v1.RunResult   `json:"results,omitempty"`
	Attempts   []stashAttempt   `json:"attempts,omitempty"`
}

// alphaTaskRunStashRead is alphaTaskRunStash as it is read.
type alphaTaskRunStashRead = conversionData[taskRunLostFieldsRead, taskRunV1Fields]

// lostFields is what was read, in the v1 types.
func (r *taskRunLostFieldsRead) lostFields() taskRunLostFields {
	return taskRunLostFields{
		Spec: r.Spec,
		Status: taskRunStatusLostFields{
			Conditions: sameShapeSlice[metav1.Condition](r.Status.Conditions),
			Steps:      sameShapeSlice[v1.StepState](r.Status.Steps),
			Results:    r.Status.Results,
			Attempts:   sameShapeSlice[v1.Attempt](r.Status.Attempts),
		},
	}
}
