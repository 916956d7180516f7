package rundecision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

const lifecycleDoc = "../../docs/lifecycle.md"

// conditionRow is a row of docs/lifecycle.md's table of the Succeeded
// condition: its status and reason.
type conditionRow struct {
	Status metav1.ConditionStatus
	Reason v1.TaskRunReason
}

// notDecidedHere are the rows of the table that no decision of the
// controller makes, and why.
var notDecidedHere = map[conditionRow]string{
	{Status: "(no condition)"}: "a run has no condition only before the controller first reconciles it: no decision writes its absence",
	{Status: metav1.ConditionFalse, Reason: v1.ReasonFailed}: "only conversion writes it, for a v1alpha1 writer's phase Failed " +
		"(runstate.ConditionFromPhase); the controller never decides it",
}

// TestLifecycleTable holds docs/lifecycle.md's table of the Succeeded
// condition to the decisions: each row the controller decides is made by a
// named decision below, from a run and its Pod in the state the row
// describes (the rows the Pod decides come through PodEnded or Progress, from
// a Pod as the kubelet reports it), and no decision makes a row the table
// lacks.
func TestLifecycleTable(t *testing.T) {
	start := testTime.Add(-10 * time.Minute)
	run := func() *wrappers.TaskRunWrapper {
		return wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour).Started(metav1.NewTime(start))
	}
	pod := threeStepPod()
	reported := func(status *wrappers.PodStatusWrapper) *corev1.Pod { return withStatus(pod, status.At(start).Obj()) }
	podEnded := func(r *v1.TaskRun, p *corev1.Pod) func() *Outcome {
		return func() *Outcome { return attemptOf(withPodName(r, "run-pod"), p, testTime).PodEnded() }
	}
	progress := func(p *corev1.Pod) func() *Outcome {
		return func() *Outcome { return attemptOf(withPodName(run().Obj(), "run-pod"), p, testTime).Progress() }
	}
	settle := func(r *v1.TaskRun, o *Outcome) func() *Outcome {
		return func() *Outcome {
			a := attemptOf(r, nil, testTime)
			a.Outcome = o
			return a.Settle()
		}
	}
	held := func(h *runpod.Hold, timeout time.Duration) func() *Outcome {
		return func() *Outcome { return attemptOf(run().Obj(), nil, testTime).Held(h, testTime.Add(-timeout), timeout) }
	}
	pendingRun := func() *v1.TaskRun {
		r := run().Obj()
		r.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
		return r
	}
	unknown := func(reason v1.TaskRunReason) conditionRow { return conditionRow{metav1.ConditionUnknown, reason} }
	failed := func(reason v1.TaskRunReason) conditionRow { return conditionRow{metav1.ConditionFalse, reason} }
	tests := map[string]struct {
		decide func() *Outcome
		want   conditionRow
	}{
		"a Pod taken up, no step started": {
			decide: progress(takenUp(pod, start)), want: unknown(v1.ReasonPending),
		},
		"a Pod the API server refused for now": {
			decide: func() *Outcome {
				o, _, _ := attemptOf(run().Obj(), nil, testTime).Refused(forbidden("exceeded quota: compute"), nil, false)
				return o
			},
			want: unknown(v1.ReasonPending),
		},
		"an earlier run's Pod in the way": {
			decide: func() *Outcome {
				earlier := wrappers.TaskRun("ns", "run", "t").UID("old").Obj()
				a := attemptOf(run().Obj(), nil, testTime)
				a.OtherPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-pod",
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(earlier, v1.GroupVersion.WithKind("TaskRun"))}}}
				return a.PodInTheWay()
			},
			want: unknown(v1.ReasonPending),
		},
		"no Task": {
			decide: func() *Outcome { _, o := attemptOf(run().Obj(), nil, testTime).TaskFound(nil); return o },
			want:   unknown(v1.ReasonWaitingForTask),
		},
		"a step running": {
			decide: progress(reported(wrappers.PodStatus(pod).Running(1))), want: unknown(v1.ReasonRunning),
		},
		"every step exited 0": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).Succeeded())),
			want:   conditionRow{metav1.ConditionTrue, v1.ReasonSucceeded},
		},
		"a step exited non-zero": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).StepFailed(1, 3))), want: failed(v1.ReasonStepFailed),
		},
		"a step killed for its memory": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).OOMKilled(1))), want: failed(v1.ReasonStepFailed),
		},
		"a step that cannot start": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).
				Waiting(1, "RunContainerError", `exec: "true": executable file not found in $PATH`))),
			want: failed(v1.ReasonStepFailed),
		},
		"the deadline passed": {
			decide: func() *Outcome { return attemptOf(run().Timeout(time.Minute).Obj(), nil, testTime).StopRequested() },
			want:   failed(v1.ReasonTimeout),
		},
		"a Pod stopped at the run's deadline": {
			decide: podEnded(run().Timeout(10*time.Minute).Obj(), reported(wrappers.PodStatus(pod).DeadlineExceeded(1))),
			want:   failed(v1.ReasonTimeout),
		},
		"cancelled": {
			decide: func() *Outcome { return attemptOf(run().Cancelled().Obj(), nil, testTime).StopRequested() },
			want:   failed(v1.ReasonCancelled),
		},
		"a Pod deleted for a cancel": {
			decide: podEnded(run().Cancelled().Obj(), nil), want: failed(v1.ReasonCancelled),
		},
		"a param without a value": {
			decide: func() *Outcome {
				_, o := attemptOf(run().Obj(), nil, testTime).TaskFound(wrappers.Task("ns", "t").Param("x").Step("a", "alpine", "true").Obj())
				return o
			},
			want: failed(v1.ReasonInvalidParams),
		},
		"a Pod over 1 MiB": {
			decide: func() *Outcome { return PodTooLarge(tooLarge()) }, want: failed(v1.ReasonInvalidParams),
		},
		"evicted": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).Evicted(1, "low on memory"))), want: failed(v1.ReasonPodFailed),
		},
		"a Pod deleted": {
			decide: podEnded(run().Obj(), nil), want: failed(v1.ReasonPodFailed),
		},
		"a Pod refused for good": {
			decide: func() *Outcome {
				o, _, _ := attemptOf(run().Obj(), nil, testTime).Refused(apierrors.NewBadRequest("the body could not be decoded"), nil, false)
				return o
			},
			want: failed(v1.ReasonPodFailed),
		},
		"a Pod lost with its node": {
			decide: func() *Outcome {
				a := attemptOf(withPodName(run().Obj(), "run-pod"), onNode(reported(wrappers.PodStatus(pod).Running(1))), testTime)
				judgeNode(a, nil)
				return a.PodEnded()
			},
			want: failed(v1.ReasonPodFailed),
		},
		"a retry's Pod not started yet": {
			decide: settle(withAttempts(withRetries(run().Obj(), 1), "run-pod"), Unknown(v1.ReasonPending, `Pod "run-pod-retry1" has not started a step yet`)),
			want:   unknown(v1.ReasonRetrying),
		},
		"a retry waiting for a lost Pod to be fenced": {
			decide: func() *Outcome {
				a := attemptOf(withRetries(withPodName(run().Obj(), "run-pod"), 1), onNode(reported(wrappers.PodStatus(pod).Running(1))), testTime)
				judgeNode(a, wrappers.Node(corev1.ConditionUnknown, testTime.Add(-2*time.Minute)))
				a.EndOrRetry()
				return a.Outcome
			},
			want: unknown(v1.ReasonRetrying),
		},
		"a retry waiting for a deleted Pod to be gone": {
			decide: func() *Outcome {
				a := attemptOf(withRetries(run().Obj(), 1), deletedAt(reported(wrappers.PodStatus(pod).Running(1)), testTime), testTime)
				a.EndOrRetry()
				return a.Outcome
			},
			want: unknown(v1.ReasonRetrying),
		},
		"a step's results over its termination message": {
			decide: podEnded(run().Obj(), endedResultsPod(3, map[int]string{
				2: `{"exitCode":0,"results":{},"resultsTooLarge":{"size":5210,"limit":4096,"cut":false}}`,
			})),
			want: failed(v1.ReasonResultsTooLarge),
		},
		"an image not pulled for longer than --image-pull-timeout": {
			decide: held(runpod.FindHeldStep(pullingPod(start)), 5*time.Minute), want: failed(v1.ReasonImagePullFailed),
		},
		"a container not made for longer than --pod-config-timeout": {
			decide: held(runpod.FindHeldStep(configPod()), 2*time.Minute), want: failed(v1.ReasonPodConfigFailed),
		},
		"a volume not mounted for longer than --pod-config-timeout": {
			decide: held(mountHold(), 2*time.Minute), want: failed(v1.ReasonPodConfigFailed),
		},
		"a Pod whose steps ask for what the namespace's Pod Security level forbids": {
			decide: func() *Outcome {
				refusal := forbidden(`violates PodSecurity "baseline:latest": privileged (container "step-a" must not set securityContext.privileged=true)`)
				o, _, _ := attemptOf(run().Obj(), nil, testTime).Refused(refusal, pod, false)
				return o
			},
			want: failed(v1.ReasonPodConfigFailed),
		},
		"no step started within spec.timeouts.pending": {
			decide: settle(pendingRun(), Unknown(v1.ReasonPending, `Pod "run-pod" is waiting to be scheduled`)),
			want:   failed(v1.ReasonPendingTimeout),
		},
		"a script step past its timeout": {
			decide: podEnded(run().Obj(), reported(wrappers.PodStatus(pod).StepFailed(1, 143).
				Ended(1, 143, `{"exitCode":143,"timedOut":true,"timeoutSeconds":60,"results":{}}`))),
			want: failed(v1.ReasonStepTimedOut),
		},
		"a step without a script past its timeout": {
			decide: func() *Outcome {
				p := commandStepPod(time.Minute)
				p = withStatus(p, wrappers.PodStatus(p).At(start).Running(0).Obj())
				return attemptOf(withPodName(run().Obj(), "run-pod"), p, testTime).StopRequested()
			},
			want: failed(v1.ReasonStepTimedOut),
		},
		"a sidecar not ready within spec.timeouts.pending": {
			decide: func() *Outcome {
				p := sidecarPod(false)
				p = withStatus(p, wrappers.PodStatus(p).At(start).Waiting(0, "PodInitializing", "").SidecarNotReady("db", false).Obj())
				a := attemptOf(withPodName(pendingRun(), "run-pod"), p, testTime)
				a.Outcome = a.Progress()
				return a.Settle()
			},
			want: failed(v1.ReasonSidecarFailed),
		},
		"a sidecar's image not pulled for longer than --image-pull-timeout": {
			decide: held(&runpod.Hold{Reason: v1.ReasonImagePullFailed, Sidecar: "db", Image: "postgres"}, 5*time.Minute),
			want:   failed(v1.ReasonSidecarFailed),
		},
		"no Task within spec.timeouts.pending": {
			decide: settle(pendingRun(), WaitingForTask(pendingRun())),
			want:   failed(v1.ReasonPendingTimeout),
		},
	}

	documented := map[conditionRow]bool{}
	for _, cells := range markdown.Table(t, lifecycleDoc, "| status | reason |") {
		documented[conditionRow{metav1.ConditionStatus(cells[0]), v1.TaskRunReason(cells[1])}] = true
	}
	for row, why := range notDecidedHere {
		if !documented[row] {
			t.Errorf("%s lacks the row %s %s, which is listed as not decided here (%s)", lifecycleDoc, row.Status, row.Reason, why)
		}
	}
	decided := map[conditionRow]bool{}
	for name, tc := range tests {
		decided[tc.want] = true
		if !documented[tc.want] {
			t.Errorf("case %q decides %s %s, which %s lacks", name, tc.want.Status, tc.want.Reason, lifecycleDoc)
		}
		if why, ok := notDecidedHere[tc.want]; ok {
			t.Errorf("case %q decides %s %s, which is listed as not decided here: %s", name, tc.want.Status, tc.want.Reason, why)
		}
		t.Run(name, func(t *testing.T) {
			o := tc.decide()
			if o == nil {
				t.Fatalf("no outcome, want %s %s", tc.want.Status, tc.want.Reason)
			}
			if diff := cmp.Diff(tc.want, conditionRow{o.Status, o.Reason}); diff != "" {
				t.Errorf("outcome %q mismatch (-want +got):\n%s", o.Message, diff)
			}
			if o.Message == "" {
				t.Errorf("outcome %s %s has no message", o.Status, o.Reason)
			}
		})
	}
	for row := range documented {
		if _, exception := notDecidedHere[row]; !exception && !decided[row] {
			t.Errorf("%s's row %s %s has no decision case", lifecycleDoc, row.Status, row.Reason)
		}
	}
}
