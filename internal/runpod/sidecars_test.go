package runpod

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// These tests read Pods with sidecars: a Task's sidecars db and proxy run
// as native sidecars, first among the init containers, in either Pod shape
// (as release 6 reads them too, after a rollback), its sidecars no steps.

// shapes are the two Pod shapes, by name: whether the Pod is chained.
var shapes = map[string]bool{"init containers": false, "chained": true}

// sidecarPod is the Pod of run "run" for a Task of script steps a, b and c
// that declares the result digest, in the shape chained says, with release
// 7's sidecars db and proxy.
func sidecarPod(chained bool) *corev1.Pod {
	task := wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true").
		Results("digest").Obj()
	pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, Inputs{Name: "run-pod", Chained: chained})
	if err != nil {
		panic(err)
	}
	return wrappers.WithSidecars(pod, "db", "proxy")
}

func TestSidecarsAreNoSteps(t *testing.T) {
	at := &metav1.Time{Time: testTime}
	for shape, chained := range shapes {
		pod := sidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		// A later step of a Pod of init containers waits for the one
		// before; a chained one's container runs, but not its turn.
		later, waitingC := "PodInitializing", v1.StepState{Name: "c", State: v1.StepWaiting, Reason: "PodInitializing"}
		if chained {
			later, waitingC = "ContainerCreating", v1.StepState{Name: "c", State: v1.StepWaiting}
		}
		tests := map[string]struct {
			pod  *corev1.Pod
			want []v1.StepState
		}{
			"every container being made": {
				pod: withStatus(pod, status().Obj()),
				want: []v1.StepState{{Name: "a", State: v1.StepWaiting, Reason: "ContainerCreating"},
					{Name: "b", State: v1.StepWaiting, Reason: later}, {Name: "c", State: v1.StepWaiting, Reason: later}},
			},
			"second step running beside the sidecars": {
				pod: withStatus(pod, status().Running(1).Obj()),
				want: []v1.StepState{
					{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
					{Name: "b", State: v1.StepRunning, StartedAt: at},
					waitingC,
				},
			},
			"steps ended, a sidecar killed": {
				pod: withStatus(pod, status().Succeeded().SidecarEnded("db", 137, "Error").Obj()),
				want: []v1.StepState{
					{Name: "a", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
					{Name: "b", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
					{Name: "c", State: v1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed", StartedAt: at, FinishedAt: at},
				},
			},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, StepStates(tc.pod)); diff != "" {
					t.Errorf("StepStates() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestOutcomeWithSidecars(t *testing.T) {
	stepFailed := func(step string, code int) *Condition {
		return failed(v1.ReasonStepFailed, "step %q exited with code %d", step, code)
	}
	for shape, chained := range shapes {
		pod := sidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		// lastFailed is the status of a Pod whose last step exited 2
		// while its sidecars still run: the kubelet says Running until
		// it has stopped them.
		lastFailed := status().Succeeded().Ended(2, 2, "").Phase(corev1.PodRunning)
		tests := map[string]struct {
			pod  *corev1.Pod
			want *Condition
		}{
			"steps running":                              {withStatus(pod, status().Running(1).Obj()), nil},
			"last step ended, a sidecar runs on":         {withStatus(pod, status().Succeeded().Phase(corev1.PodRunning).Obj()), succeeded()},
			"last step ended, a sidecar killed with 137": {withStatus(pod, status().Succeeded().SidecarEnded("db", 137, "Error").Obj()), succeeded()},
			"last step ended, sidecars stopped with 143": {withStatus(pod, status().Succeeded().SidecarEnded("db", 143, "Error").SidecarEnded("proxy", 143, "Error").Obj()), succeeded()},
			"last step ended, sidecars killed, the phase not yet": {
				withStatus(pod, status().Succeeded().Phase(corev1.PodRunning).SidecarEnded("db", 137, "Error").Obj()), succeeded()},
			"last step failed, the sidecars run on": {withStatus(pod, lastFailed.Obj()), stepFailed("c", 2)},
			"last step failed, the Pod failed":      {withStatus(pod, status().Succeeded().Ended(2, 2, "").SidecarEnded("db", 137, "Error").Obj()), stepFailed("c", 2)},
			"a sidecar cannot start: no step failed": {
				withStatus(pod, status().Waiting(0, "PodInitializing", "").SidecarEnded("db", 128, "StartError").Obj()), nil},
			"a sidecar's image cannot be pulled: no step failed": {
				withStatus(pod, status().Waiting(0, "PodInitializing", "").SidecarWaiting("db", "ImagePullBackOff", `Back-off pulling image "db-image"`).Obj()), nil},
		}
		if chained {
			tests["second step failed, the Pod goes on"] = struct {
				pod  *corev1.Pod
				want *Condition
			}{withStatus(pod, status().StepFailed(1, 3).Phase(corev1.PodRunning).Obj()), stepFailed("b", 3)}
		} else {
			tests["first step failed"] = struct {
				pod  *corev1.Pod
				want *Condition
			}{withStatus(pod, status().StepFailed(0, 3).Obj()), stepFailed("a", 3)}
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, Outcome(tc.pod, StepStates(tc.pod))); diff != "" {
					t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
				}
				if FailedWhileRunning(tc.pod) {
					t.Error("FailedWhileRunning() = true: the kubelet stops a Pod's sidecars once its steps have ended")
				}
			})
		}
	}
}

// TestPendingWithSidecars: a sidecar that waits holds the steps back: the
// run stays Pending, saying why, until the pending timeout (or, for an
// image it cannot pull, --image-pull-timeout: a hold of the sidecar's). A
// Pod whose sidecar ran is never deleted unstarted: its logs stay.
func TestPendingWithSidecars(t *testing.T) {
	pull := `Back-off pulling image "db-image"`
	for shape, chained := range shapes {
		pod := sidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		tests := map[string]struct {
			pod          *corev1.Pod
			want         *Condition
			neverStarted bool
			heldSidecar  string
		}{
			"sidecars being made": {withStatus(pod, status().Obj()),
				&Condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`}, true, ""},
			"a sidecar's image cannot be pulled, the other ran": {
				withStatus(pod, status().Waiting(0, "PodInitializing", "").SidecarWaiting("db", "ImagePullBackOff", pull).Obj()),
				&Condition{metav1.ConditionUnknown, v1.ReasonPending, `sidecar "db": ImagePullBackOff: ` + pull}, false, "db"},
			"sidecars run, the first step's image is pulled": {
				withStatus(pod, status().Waiting(0, "ContainerCreating", "").Obj()),
				&Condition{metav1.ConditionUnknown, v1.ReasonPending, `Pod "run-pod" has not started a step yet`}, false, ""},
			"the first step runs": {withStatus(pod, status().Running(0).Obj()),
				&Condition{metav1.ConditionUnknown, v1.ReasonRunning, `running step "a" (1 of 3)`}, false, ""},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				steps := StepStates(tc.pod)
				if o := Outcome(tc.pod, steps); o != nil {
					t.Errorf("Outcome() = %+v, want nil", o)
				}
				if diff := cmp.Diff(tc.want, Progress(tc.pod, steps, nil)); diff != "" {
					t.Errorf("Progress() mismatch (-want +got):\n%s", diff)
				}
				if h := FindHeldStep(tc.pod); (h == nil) != (tc.heldSidecar == "") || (h != nil && (h.Sidecar != tc.heldSidecar || h.Step != "")) {
					t.Errorf("FindHeldStep() = %+v, want sidecar %q held, or nothing", h, tc.heldSidecar)
				}
				if got := NeverStarted(tc.pod); got != tc.neverStarted {
					t.Errorf("NeverStarted() = %t, want %t", got, tc.neverStarted)
				}
			})
		}
	}
}

// TestHeldStepAfterSidecars: the first step's pull is counted from when its
// last sidecar started, which the kubelet waits for.
func TestHeldStepAfterSidecars(t *testing.T) {
	pod := sidecarPod(false)
	started := testTime.Add(40 * time.Second)
	w := wrappers.PodStatus(pod).At(testTime).CannotPull(0, "ImagePullBackOff", "no", testTime)
	w.At(started).SidecarRunning("proxy")
	h := FindHeldStep(withStatus(pod, w.Obj()))
	if h == nil || h.Step != "a" || !h.Since.Equal(started) {
		t.Errorf("FindHeldStep() = %+v, want step \"a\" held since %s", h, started)
	}
}

func TestResultsWithSidecars(t *testing.T) {
	for shape, chained := range shapes {
		t.Run(shape, func(t *testing.T) {
			pod := sidecarPod(chained)
			w := wrappers.PodStatus(pod).At(testTime).Succeeded().Ended(0, 0, message(0, "digest", "sha256:a")).
				SidecarEnded("db", 137, "Error")
			p := withStatus(pod, w.Obj())
			// What a sidecar writes as its termination message is its own.
			p.Status.InitContainerStatuses[0].State.Terminated.Message = message(0, "digest", "sidecar")
			if diff := cmp.Diff([]v1.RunResult{result("digest", "sha256:a")}, Results(p)); diff != "" {
				t.Errorf("Results() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResultsTooLargeWithSidecars: the kubelet shares the Pod's 12 KiB among
// its sidecars too.
func TestResultsTooLargeWithSidecars(t *testing.T) {
	pod := sidecarPod(false)
	// Five containers keep 2457 bytes each: a message cut there.
	cut := (`{"exitCode":0,"results":{"digest":"` + strings.Repeat("d", 4000))[:2457]
	p := withStatus(pod, wrappers.PodStatus(pod).At(testTime).Succeeded().Ended(1, 0, cut).Obj())
	want := failed(v1.ReasonResultsTooLarge,
		`step "b"'s results do not fit its termination message: the kubelet cut the message at 2457 bytes, what it keeps for each step of a Pod of 3 steps and 2 sidecars (4096 bytes at most, 12 KiB for all steps together); write less to $(results.NAME.path), or hand large values over in a workspace`)
	if diff := cmp.Diff(want, Outcome(p, StepStates(p))); diff != "" {
		t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
	}
}

func TestJudgedByNodeWithSidecars(t *testing.T) {
	for shape, chained := range shapes {
		t.Run(shape, func(t *testing.T) {
			pod := sidecarPod(chained)
			pod.Spec.NodeName = "node-1"
			// The Pod garbage collector failed it once its steps had
			// ended, its sidecar killed: no kubelet said so.
			p := failedByPodGC(withStatus(pod, wrappers.PodStatus(pod).At(testTime).Running(2).SidecarEnded("db", 137, "Error").Obj()))
			if node, judged := JudgedByNode(p); !judged || node != "node-1" {
				t.Errorf("JudgedByNode() = %q, %t, want node-1, true: a sidecar's exit is no kubelet's word", node, judged)
			}
		})
	}
}
