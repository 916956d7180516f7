package rundecision

import (
	"encoding/json"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file ends a run whose Pod the kubelet holds back for longer than the
// manager allows: a step's image it fails to pull (--image-pull-timeout, then
// ImagePullFailed), or a step it cannot make or a volume it cannot mount for
// the Pod's configuration (--pod-config-timeout, then PodConfigFailed),
// instead of letting the run wait until its own timeout (an hour by default)
// with no more than a Pending message. What holds the Pod back is a
// runpod.Hold, read from the Pod or its Events; since when, and for how long
// it may, are decided here.
//
// Neither end is retried, whatever retryOn says: the next attempt would meet
// the same registry or configuration, and spend as long again before
// failing. The Pod is stopped only once the run's status says so
// (PodOutlivesEnd), not before, as a cancel's or a timeout's is: the hold,
// in the Pod's status, is the only evidence of this outcome.

// HeldTimeouts are how long the kubelet may hold a Pod back; 0 means no
// limit but the run's timeout.
type HeldTimeouts struct {
	// ImagePull bounds a step's image that fails to pull.
	ImagePull time.Duration
	// PodConfig bounds a container that cannot be made or a volume that
	// cannot mount.
	PodConfig time.Duration
}

// For is how long a hold ending a run with reason may last.
func (t HeldTimeouts) For(reason v1.TaskRunReason) time.Duration {
	if reason == v1.ReasonImagePullFailed {
		return t.ImagePull
	}
	return t.PodConfig
}

// Held ends the run when h, first seen at since, has held its Pod back for
// longer than timeout; before that, it asks for the run to be looked at
// again when it would have, for the Pod's status may not change meanwhile. A
// timeout of 0 or less is no limit but the run's own.
func (a *Attempt) Held(h *runpod.Hold, since time.Time, timeout time.Duration) *Outcome {
	if timeout <= 0 {
		return nil
	}
	if left := since.Add(timeout).Sub(a.Now); left > 0 {
		a.RecheckWithin(left)
		return nil
	}
	return FromPod(h.Outcome(timeout))
}

// AnnotationHeldSince is the Pod annotation that records what held the Pod
// back for its configuration, and since when (heldRecord, as JSON). An image
// pull's wait has a start in the Pod's status (when the step could start:
// the kubelet pulls first); a step's container that cannot be made, or a
// volume that cannot mount, has none there (the pull may have taken minutes
// before), and the kubelet's Events may be dropped or merged. So the
// controller writes the time it first saw the hold on the Pod, the object
// that carries the hold and goes with it: one patch for each thing that
// holds a Pod back, never one for a Pod that starts.
const AnnotationHeldSince = "minitask.dev/held-since"

// heldRecord is AnnotationHeldSince's value: the container or the volume
// held, and when the controller first saw it held.
type heldRecord struct {
	Container string    `json:"container,omitempty"`
	Volume    string    `json:"volume,omitempty"`
	Since     time.Time `json:"since"`
}

// HeldSince returns when h began to hold the attempt's Pod back, and, when
// that is now, the value of AnnotationHeldSince to record on the Pod. For a
// pull, the Pod's status says (runpod.FindHeldStep). For a configuration, it
// is the time the Pod records for the same container or volume; failing
// that, now: a Pod held by another thing before (a Secret, then a ConfigMap
// of a later step) waits anew.
func (a *Attempt) HeldSince(h *runpod.Hold) (since time.Time, record string) {
	if h.Reason != v1.ReasonPodConfigFailed {
		return h.Since, ""
	}
	var recorded heldRecord
	if err := json.Unmarshal([]byte(a.Pod.Annotations[AnnotationHeldSince]), &recorded); err == nil &&
		recorded.Container == h.Container && recorded.Volume == h.Volume && !recorded.Since.IsZero() {
		return recorded.Since, ""
	}
	now := a.Now.Truncate(time.Second)
	value, _ := json.Marshal(heldRecord{Container: h.Container, Volume: h.Volume, Since: now}) // strings and a time always marshal
	return now, string(value)
}

// A run that waits for something no event announces looks again
// recheckMin after its wait began, then less often the longer it has
// waited (half its wait so far), up to recheckMax apart: soon for what
// usually passes in seconds, without a read a second for each run that
// waits for long.
const (
	recheckMin = time.Second
	recheckMax = 30 * time.Second
)

// recheckAfterWaiting is how soon a run that has waited so long looks again.
func recheckAfterWaiting(waited time.Duration) time.Duration {
	return min(max(waited/2, recheckMin), recheckMax)
}

// MayBeHeldByMount says that the attempt's Pod may be held back by a volume
// the kubelet cannot mount, which only its Events tell
// (runpod.MayBeHeldByMount): the controller reads them, and, finding none,
// the run looks again (MountNotHeldYet).
func (a *Attempt) MayBeHeldByMount() bool { return runpod.MayBeHeldByMount(a.Pod) }

// MountNotHeldYet asks for a run whose Pod may yet be held by a mount, of
// which no Event says so yet, to be looked at again: nothing tells the
// controller when such an Event comes, while the end of the wait changes the
// Pod's status, and so needs no look.
func (a *Attempt) MountNotHeldYet() {
	a.RecheckWithin(recheckAfterWaiting(a.Now.Sub(a.Pod.Status.StartTime.Time)))
}
