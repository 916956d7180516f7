package runstate

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// AnnotationStepTimeouts is set on a Pod with a step that has a timeout and
// no script: the JSON object of each such step's container name and
// timeout, as a Go duration. A script step's wrapper stops its script at
// its timeout (internal/stepscript); a step without a script runs its
// command as the image has it, with nothing around it, and the controller
// stops its Pod past the timeout, which it reads from the Pod alone.
const AnnotationStepTimeouts = "minitask.dev/step-timeouts"

// StepTimeoutsAnnotation returns the value of AnnotationStepTimeouts for
// timeouts (by container name), and false when there are none, so that no
// annotation is needed.
func StepTimeoutsAnnotation(timeouts map[string]time.Duration) (string, bool) {
	if len(timeouts) == 0 {
		return "", false
	}
	texts := make(map[string]string, len(timeouts))
	for container, d := range timeouts {
		texts[container] = d.String()
	}
	data, err := json.Marshal(texts)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// StepTimeouts returns, by container name, the timeouts that pod's
// AnnotationStepTimeouts holds; an entry that does not parse, or is not
// positive, is left out.
func StepTimeouts(pod *corev1.Pod) map[string]time.Duration {
	value, ok := pod.Annotations[AnnotationStepTimeouts]
	if !ok {
		return nil
	}
	var texts map[string]string
	if err := json.Unmarshal([]byte(value), &texts); err != nil {
		return nil
	}
	timeouts := make(map[string]time.Duration, len(texts))
	for container, text := range texts {
		if d, err := time.ParseDuration(text); err == nil && d > 0 {
			timeouts[container] = d
		}
	}
	return timeouts
}
