package rundecision

import (
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
