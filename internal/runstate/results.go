package runstate

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file names where a run's results live and how a step hands them
// back: the results volume and its files, the Pod annotations that tell the
// controller which steps speak the termination-message protocol, and the
// protocol's message. The controller builds the Pod and reads it back with
// them, and the docs promise them, so none of them can disagree.

const (
	// ResultsVolume is the emptyDir every step of a Task that declares
	// results mounts at ResultsDir.
	ResultsVolume = "minitask-results"
	// ResultsDir holds one file per result, named after it: what
	// $(results.NAME.path) expands to is ResultsDir/NAME.
	ResultsDir = "/minitask/results"

	// TerminationMessagePath is where a step's container writes its
	// termination message: the kubelet's default, which the controller
	// leaves as it is.
	TerminationMessagePath = "/dev/termination-log"

	// MaxTerminationMessage is the most the kubelet reads of one container's
	// termination message: it cuts a longer one at this many bytes.
	MaxTerminationMessage = 4096
	// maxPodTerminationMessages is the most the kubelet keeps of all a Pod's
	// termination messages together, shared equally by its containers.
	maxPodTerminationMessages = 12 * 1024

	// AnnotationResults is set on the Pod of a run whose Task declares
	// results: the JSON list of their names, in the Task's order, so that
	// status.results can be read from the Pod alone.
	AnnotationResults = "minitask.dev/results"
	// AnnotationScriptSteps is set on a Pod with script steps: the JSON list
	// of their container names. Only these containers write the protocol's
	// message; what any other container writes to its termination message is
	// its own business, and is never read as results.
	AnnotationScriptSteps = "minitask.dev/script-steps"
)

// ResultPath returns the file a step writes the result name to: what
// $(results.NAME.path) expands to.
func ResultPath(name string) string {
	return ResultsDir + "/" + name
}

// ResultPaths returns, by name, the file of each result task declares.
func ResultPaths(task *v1.Task) map[string]string {
	paths := make(map[string]string, len(task.Spec.Results))
	for _, r := range task.Spec.Results {
		paths[r.Name] = ResultPath(r.Name)
	}
	return paths
}

// ResultNames returns the names of the results task declares, in its order.
func ResultNames(task *v1.Task) []string {
	names := make([]string, len(task.Spec.Results))
	for i, r := range task.Spec.Results {
		names[i] = r.Name
	}
	return names
}

// TerminationMessageLimit is the most bytes of its termination message that
// the kubelet keeps for each container of a Pod of containers containers:
// 4096, less when more than three containers share the Pod's 12 KiB.
func TerminationMessageLimit(containers int) int {
	if containers <= 0 {
		return MaxTerminationMessage
	}
	return min(MaxTerminationMessage, maxPodTerminationMessages/containers)
}

// TerminationMessage is what a script step writes as its termination message
// when its script ends: the script's own exit code, and the value of every
// result whose file was present then, by name, or why they did not fit.
type TerminationMessage struct {
	ExitCode *int32            `json:"exitCode"`
	Results  map[string]string `json:"results,omitempty"`
	// ResultsTooLarge is set, and Results empty, when the results would
	// have made the message longer than the kubelet keeps.
	ResultsTooLarge *ResultsTooLarge `json:"resultsTooLarge,omitempty"`
	// StartedAt and FinishedAt are when a chained step's script began and
	// ended, in seconds since the epoch, as its wrapper read them (where
	// the image has date): its container's times are not its command's.
	StartedAt  *int64 `json:"startedAt,omitempty"`
	FinishedAt *int64 `json:"finishedAt,omitempty"`
	// TimedOut says that the script ran past the step's timeout, of
	// TimeoutSeconds, and was stopped (internal/stepscript's timer);
	// ExitCode is still the script's own.
	TimedOut       bool   `json:"timedOut,omitempty"`
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
}

// ResultsTooLarge is what a script step reports of results that did not fit
// its termination message.
type ResultsTooLarge struct {
	// Size is the length the message would have had.
	Size int `json:"size"`
	// Limit is the most the kubelet keeps of the step's message.
	Limit int `json:"limit"`
	// Cut says that a result's file was longer than the step reads of it, so
	// that the message would have been longer still than Size.
	Cut bool `json:"cut"`
}

// ParseTerminationMessage reads a script step's termination message. A
// message that is not the protocol's JSON object, or lacks its exit code, is
// an error: it was cut by the kubelet, or written by something other than
// the step's wrapper.
func ParseTerminationMessage(message string) (TerminationMessage, error) {
	var m TerminationMessage
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		return TerminationMessage{}, fmt.Errorf("not the JSON object of a script step's termination message: %w", err)
	}
	if m.ExitCode == nil {
		return TerminationMessage{}, errors.New(`the termination message has no "exitCode"`)
	}
	return m, nil
}

// NamesAnnotation returns the value of AnnotationResults or
// AnnotationScriptSteps for names, and false when there are none, so that no
// annotation is needed.
func NamesAnnotation(names []string) (string, bool) {
	if len(names) == 0 {
		return "", false
	}
	text, _ := json.Marshal(names) // a []string always marshals
	return string(text), true
}

// AnnotatedNames reads a list that NamesAnnotation wrote; nil when the
// annotation is absent or not such a list (a Pod of an earlier release).
func AnnotatedNames(annotations map[string]string, key string) []string {
	var names []string
	if err := json.Unmarshal([]byte(annotations[key]), &names); err != nil {
		return nil
	}
	return names
}
