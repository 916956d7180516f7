package cli_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// digestTask is greetTask, named digest, with three results.
func digestTask() *v1.Task {
	task := greetTask("digest")
	task.Spec.Results = []v1.ResultDeclaration{{Name: "digest"}, {Name: "size"}, {Name: "notes"}}
	return task
}

// at is a time d from h's clock.
func (h *harness) at(d time.Duration) *metav1.Time {
	return ptr.To(metav1.NewTime(h.now.Add(d)))
}

// finishedStatus is the status of a run that started at start and ended at
// end, as reason says, with message.
func (h *harness) finishedStatus(reason v1.TaskRunReason, message string, start, end time.Duration) v1.TaskRunStatus {
	status := metav1.ConditionFalse
	if reason == v1.ReasonSucceeded {
		status = metav1.ConditionTrue
	}
	return v1.TaskRunStatus{
		Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason), Message: message,
			ObservedGeneration: 1, LastTransitionTime: *h.at(end)}},
		StartTime: h.at(start), CompletionTime: h.at(end),
	}
}

// outcomeHistory fills h's namespace, where no controller runs, with the
// Task digest and runs of it that use release 3's run semantics:
//
//	digest-old       Succeeded 3h ago, no retries, no TTL
//	digest-retried   Succeeded 10m ago on its second of three attempts
//	                 (retries 2, on StepFailed and PodFailed; its first Pod
//	                 evicted), TTL 1h; results digest (long), size (empty),
//	                 notes not written
//	digest-pending   Pending: its Pod cannot be scheduled; retries 1
func (h *harness) outcomeHistory(t *testing.T) {
	t.Helper()
	retried := wrappers.TaskRun("", "digest-retried", "digest").Param("greeting", "hi").Obj()
	retried.Spec.Retries = ptr.To[int32](2)
	retried.Spec.RetryOn = []v1.RetryReason{v1.RetryOnStepFailed, v1.RetryOnPodFailed}
	retried.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
	pending := wrappers.TaskRun("", "digest-pending", "digest").Param("greeting", "hi").Obj()
	pending.Spec.Retries = ptr.To[int32](1)
	h.Create(t, digestTask(),
		wrappers.TaskRun("", "digest-old", "digest").Param("greeting", "hi").Obj(), retried, pending)

	h.setRunStatus(t, "digest-old", h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -3*time.Hour, -3*time.Hour+time.Minute))
	status := h.finishedStatus(v1.ReasonSucceeded, "every step exited 0", -20*time.Minute, -10*time.Minute)
	status.PodName = "digest-retried-pod-retry1"
	status.Results = []v1.RunResult{
		{Name: "digest", Value: ptr.To("sha256:" + strings.Repeat("0123456789abcdef", 8))},
		{Name: "size", Value: ptr.To("")},
	}
	status.Attempts = []v1.Attempt{{PodName: "digest-retried-pod", StartTime: h.at(-20 * time.Minute), CompletionTime: h.at(-15 * time.Minute),
		Reason: string(v1.ReasonPodFailed), Message: "The node was low on resource: memory."}}
	h.setRunStatus(t, "digest-retried", status)
	h.setRunStatus(t, "digest-pending", v1.TaskRunStatus{
		Conditions: []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: string(v1.ReasonPending),
			Message:            `Pod "digest-pending-pod" cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.`,
			ObservedGeneration: 1, LastTransitionTime: *h.at(-time.Minute)}},
		PodName: "digest-pending-pod", StartTime: h.at(-time.Minute),
	})
}
