package rundecision

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestRunWithRelease7Sidecars follows a run whose Pod release 7 built, its
// Task's sidecars db and proxy native sidecars first among the init
// containers, in either Pod shape, as this release decides it after a
// rollback: its steps are the steps, and it ends when its last step does,
// whatever the sidecars do.
func TestRunWithRelease7Sidecars(t *testing.T) {
	type decided struct {
		Status  metav1.ConditionStatus
		Reason  v1.TaskRunReason
		Message string
		// Steps are each step's name and state, in order.
		Steps   []string
		Results []v1.RunResult
	}
	digest := []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:c")}}
	ended := []string{"a Terminated", "b Terminated", "c Terminated"}
	pull := `Back-off pulling image "db-image"`
	for shape, chained := range map[string]bool{"init containers": false, "chained": true} {
		task := wrappers.Task("ns", "t").Step("a", "alpine", "true").Step("b", "alpine", "true").Step("c", "alpine", "true").Results("digest")
		pod, err := runpod.Build(wrappers.TaskRun("ns", "run", "t").Obj(), task.Obj(), runpod.Inputs{Name: "run-pod", Chained: chained})
		if err != nil {
			t.Fatal(err)
		}
		pod = wrappers.WithSidecars(pod, "db", "proxy")
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		stepsDone := func() *wrappers.PodStatusWrapper {
			return status().Succeeded().Ended(2, 0, `{"exitCode":0,"results":{"digest":"sha256:c"}}`)
		}
		bFailed := status().StepFailed(1, 3)
		if chained {
			// c's turn never comes, but its container runs on until
			// the Pod is stopped.
			bFailed = status().StepFailed(1, 3).Phase(corev1.PodRunning)
		}
		tests := map[string]struct {
			status *wrappers.PodStatusWrapper
			want   decided
		}{
			"second step runs beside the sidecars": {status().Running(1), decided{
				metav1.ConditionUnknown, v1.ReasonRunning, `running step "b" (2 of 3)`,
				[]string{"a Terminated", "b Running", "c Waiting"}, nil}},
			"steps ended, a sidecar runs on": {stepsDone().Phase(corev1.PodRunning), decided{
				metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0", ended, digest}},
			"steps ended, a sidecar killed with 137": {stepsDone().SidecarEnded("db", 137, "Error").SidecarEnded("proxy", 0, "Completed"), decided{
				metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0", ended, digest}},
			"steps ended, sidecars stopped with 143, the phase not yet": {
				stepsDone().Phase(corev1.PodRunning).SidecarEnded("db", 143, "Error").SidecarEnded("proxy", 143, "Error"), decided{
					metav1.ConditionTrue, v1.ReasonSucceeded, "every step exited 0", ended, digest}},
			"second step failed beside the sidecars": {bFailed, decided{
				metav1.ConditionFalse, v1.ReasonStepFailed, `step "b" exited with code 3`,
				[]string{"a Terminated", "b Terminated", "c Waiting"}, nil}},
			"last step failed, the sidecars run on": {stepsDone().Ended(2, 1, "").Phase(corev1.PodRunning), decided{
				metav1.ConditionFalse, v1.ReasonStepFailed, `step "c" exited with code 1`, ended, nil}},
			"a sidecar's image cannot be pulled while the first step waits": {
				status().Waiting(0, "PodInitializing", "").SidecarWaiting("db", "ImagePullBackOff", pull), decided{
					metav1.ConditionUnknown, v1.ReasonPending, `sidecar "db": ImagePullBackOff: ` + pull,
					[]string{"a Waiting", "b Waiting", "c Waiting"}, nil}},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				run := wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour).Started(metav1.NewTime(testTime)).Obj()
				run.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
				a := attemptOf(withPodName(run, "run-pod"), withStatus(pod, tc.status.Obj()), testTime.Add(time.Minute))
				if a.Outcome = a.PodEnded(); a.Outcome == nil {
					a.Outcome = a.Progress()
				}
				a.Settle()
				a.ApplyStatus()
				got := decided{Status: a.Outcome.Status, Reason: a.Outcome.Reason, Message: a.Outcome.Message, Results: a.Run.Status.Results}
				for _, s := range a.Run.Status.Steps {
					got.Steps = append(got.Steps, s.Name+" "+string(s.State))
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("decided (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestSidecarsInStatus: status.sidecars follows the Pod's sidecars; a run
// whose steps ended completes when its last step did, whatever the sidecars
// do; a sidecar that holds the first step past the pending timeout fails the
// run SidecarFailed, naming it and why.
func TestSidecarsInStatus(t *testing.T) {
	stepsEnded := testTime.Add(30 * time.Second)
	type decided struct {
		Reason     v1.TaskRunReason
		Message    string
		Sidecars   []string
		Completion *metav1.Time
	}
	for shape, chained := range map[string]bool{"init containers": false, "chained": true} {
		pod := sidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		tests := map[string]struct {
			status *wrappers.PodStatusWrapper
			now    time.Time
			want   decided
		}{
			"db not ready yet": {status().Waiting(0, "PodInitializing", "").SidecarNotReady("db", false), testTime.Add(time.Minute), decided{
				v1.ReasonPending, `sidecar "db": running, not ready: its readiness probe has not passed`, []string{"db Running false", "proxy Running true"}, nil}},
			"db not ready past the pending timeout": {status().Waiting(0, "PodInitializing", "").SidecarNotReady("db", false), testTime.Add(6 * time.Minute), decided{
				v1.ReasonSidecarFailed, `TaskRun "run": sidecar "db" did not start and become ready within 5m0s (spec.timeouts.pending): running, not ready: its readiness probe has not passed`,
				[]string{"db Running false", "proxy Running true"}, &metav1.Time{Time: testTime.Add(6 * time.Minute)}}},
			"db's image past the pending timeout": {status().Waiting(0, "PodInitializing", "").SidecarWaiting("db", "ImagePullBackOff", "no"), testTime.Add(6 * time.Minute), decided{
				v1.ReasonSidecarFailed, `TaskRun "run": sidecar "db" did not start and become ready within 5m0s (spec.timeouts.pending): ImagePullBackOff: no`,
				[]string{"db Waiting false", "proxy Running true"}, &metav1.Time{Time: testTime.Add(6 * time.Minute)}}},
			"the steps' image past the pending timeout": {status().Waiting(0, "ErrImagePull", "no").SidecarRunning("db"), testTime.Add(6 * time.Minute), decided{
				v1.ReasonPendingTimeout, `TaskRun "run" did not start its first step within 5m0s (spec.timeouts.pending): step "a": ErrImagePull: no`,
				[]string{"db Running true", "proxy Running true"}, &metav1.Time{Time: testTime.Add(6 * time.Minute)}}},
			"steps ran, a sidecar restarted": {status().Running(2).SidecarRunning("db").SidecarRestarted("db", 1, 1), testTime.Add(time.Minute), decided{
				v1.ReasonRunning, `running step "c" (3 of 3)`, []string{"db Running true", "proxy Running true"}, nil}},
			"steps ended, sidecars run on": {wrappers.PodStatus(pod).At(stepsEnded).Succeeded().Phase(corev1.PodRunning), testTime.Add(time.Minute), decided{
				v1.ReasonSucceeded, "every step exited 0", []string{"db Running true", "proxy Running true"}, &metav1.Time{Time: stepsEnded}}},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				run := wrappers.TaskRun("ns", "run", "t").Timeout(time.Hour).Started(metav1.NewTime(testTime)).Obj()
				run.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
				a := attemptOf(withPodName(run, "run-pod"), withStatus(pod, tc.status.Obj()), tc.now)
				if a.Outcome = a.PodEnded(); a.Outcome == nil {
					a.Outcome = a.Progress()
				}
				a.Settle()
				a.ApplyStatus()
				got := decided{Reason: a.Outcome.Reason, Message: a.Outcome.Message, Completion: a.Run.Status.CompletionTime}
				for _, s := range a.Run.Status.Sidecars {
					got.Sidecars = append(got.Sidecars, fmt.Sprintf("%s %s %t", s.Name, s.State, *s.Ready))
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("decided (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestSidecarRestarts(t *testing.T) {
	state := func(name string, restarts int32) v1.SidecarState {
		s := v1.SidecarState{Name: name}
		if restarts > 0 {
			s.RestartCount = ptr.To(restarts)
		}
		return s
	}
	tests := map[string]struct {
		before, after []v1.SidecarState
		want          []string
	}{
		"none":            {},
		"no restart":      {[]v1.SidecarState{state("db", 0)}, []v1.SidecarState{state("db", 0)}, nil},
		"a first restart": {nil, []v1.SidecarState{state("db", 1), state("proxy", 0)}, []string{`sidecar "db" exited and was restarted by the kubelet (1 restarts so far)`}},
		"another":         {[]v1.SidecarState{state("db", 1)}, []v1.SidecarState{state("db", 3)}, []string{`sidecar "db" exited and was restarted by the kubelet (3 restarts so far)`}},
		"seen before":     {[]v1.SidecarState{state("db", 2)}, []v1.SidecarState{state("db", 2)}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SidecarRestarts(tc.before, tc.after)); diff != "" {
				t.Errorf("SidecarRestarts() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
