package runlogs

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
)

// This file says when a step's log is gone rather than unreadable for a
// reason the user can fix: a step's log lives on its node, served by its
// kubelet, and goes with the Pod or the node (docs/lifecycle.md, "Node
// faults"). A run lost with its node, or a Pod deleted for good, is an
// outcome to report, not an error of the plugin's.

// podGone says why the log of step, in the attempt-th attempt of run, is
// gone when that attempt's Pod, which run names, no longer exists (pod is
// nil); "" when the step's log may yet come (no Pod named yet, or a step
// that had not started). For the current attempt, the run's status.steps
// say whether the step had started; for an earlier one, which they no
// longer describe, only its first step is reported, once, in the place of
// the attempt's logs.
func podGone(run *v1.TaskRun, attempt int, pod *corev1.Pod, step string) string {
	name := attemptPod(run, attempt)
	if pod != nil || name == "" {
		return ""
	}
	why := fmt.Sprintf("Pod %q no longer exists", name)
	if attempt < len(run.Status.Attempts) {
		return why
	}
	for _, st := range run.Status.Steps {
		if st.Name == step && st.StartedAt != nil {
			return why
		}
	}
	return ""
}

// whyGone says why the log of a container of pod, which could not be opened
// (err), is gone for good, or cannot be read while its node is not ready;
// "" when it is not known to be (an error to report as it is). The Pod's
// node says, when the user may read it; else the logs API's own NotFound,
// which it answers for a Pod gone since it was read, or a node gone.
func (s *PodSource) whyGone(ctx context.Context, pod *corev1.Pod, err error) string {
	if pod.Spec.NodeName == "" {
		return ""
	}
	node := &corev1.Node{}
	switch nerr := s.Reader.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); {
	case nerr == nil:
	case apierrors.IsNotFound(nerr):
		node = nil
	case apierrors.IsNotFound(err):
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Message != "" {
			// The API server's words alone, not the request's URL.
			return fmt.Sprintf("Pod %q or its node %q no longer exists: %s", pod.Name, pod.Spec.NodeName, status.Status().Message)
		}
		return fmt.Sprintf("Pod %q or its node %q no longer exists", pod.Name, pod.Spec.NodeName)
	default:
		return ""
	}
	v := nodefault.Judge(nodefault.Read(pod.Spec.NodeName, node), pod.DeletionTimestamp != nil, time.Time{}, 0)
	if !v.Fenced && !v.NotReady {
		return ""
	}
	return fmt.Sprintf("Pod %q is on node %q, and %s", pod.Name, v.Node, v.Why)
}
