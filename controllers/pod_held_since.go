package controllers

import (
	"context"
	"encoding/json"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
)

// This file keeps when a run's Pod was first seen held back by its
// configuration, so that --pod-config-timeout counts from then whatever
// becomes of the manager. An image pull's wait has a start in the Pod's
// status (when the step could start: the kubelet pulls first); a step's
// container that cannot be made, or a volume that cannot mount, has none
// there (the pull may have taken minutes before), and the kubelet's Events
// may be dropped or merged. So the controller writes the time it first saw
// the hold on the Pod, the object that carries the hold and goes with it:
// one patch for each thing that holds a Pod back, never one for a Pod that
// starts.

// annotationHeldSince is the Pod annotation that records what held the Pod
// back for its configuration, and since when (heldRecord, as JSON).
const annotationHeldSince = "minitask.dev/held-since"

// heldRecord is annotationHeldSince's value: the container or the volume
// held, and when the controller first saw it held.
type heldRecord struct {
	Container string    `json:"container,omitempty"`
	Volume    string    `json:"volume,omitempty"`
	Since     time.Time `json:"since"`
}

// heldSince returns when h began to hold s.pod back. For a pull, the Pod's
// status says (runpod.FindHeldStep). For a configuration, it is the time the Pod
// records for the same container or volume; failing that, now, which it
// records: a Pod held by another thing before (a Secret, then a ConfigMap of
// a later step) waits anew. The patch is locked to the Pod as read: a cache
// that has not caught up with an earlier record, or another write, makes it
// conflict, and the Pod's watch event brings the next reconcile, which reads
// the record. A record that cannot be written (a webhook that refuses Pod
// updates, say) is logged, and the wait starts again at the next look: the
// run then waits for its own timeout rather than fail early, and its status
// is written all the same.
func (r *TaskRunReconciler) heldSince(ctx context.Context, s *runScope, h *runpod.Hold) time.Time {
	if h.Reason != v1.ReasonPodConfigFailed {
		return h.Since
	}
	var recorded heldRecord
	if err := json.Unmarshal([]byte(s.pod.Annotations[annotationHeldSince]), &recorded); err == nil &&
		recorded.Container == h.Container && recorded.Volume == h.Volume && !recorded.Since.IsZero() {
		return recorded.Since
	}
	now := s.now.Truncate(time.Second)
	record, _ := json.Marshal(heldRecord{Container: h.Container, Volume: h.Volume, Since: now}) // strings and a time always marshal
	base := s.pod.DeepCopy()
	if s.pod.Annotations == nil {
		s.pod.Annotations = map[string]string{}
	}
	s.pod.Annotations[annotationHeldSince] = string(record)
	err := r.Client.Patch(ctx, s.pod, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	logger := log.FromContext(ctx).WithValues("pod", s.pod.Name, "held", h.Subject())
	switch {
	case err == nil:
		logger.Info("Pod held back for its configuration", "kubeletReason", h.Why.Reason, "kubeletMessage", h.Why.Message)
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		logger.V(1).Info("Pod changed since it was read; its next reconcile records the hold", "error", err.Error())
	default:
		logger.Error(err, "recording on the Pod when it was first held back; the wait starts again at the next look")
	}
	return now
}
