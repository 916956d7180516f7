package runpod

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// probedSidecarPod is the Pod, in the shape chained says, of a Task whose
// sidecar db has a readinessProbe and proxy none, before steps a and b.
func probedSidecarPod(chained bool) *corev1.Pod {
	ready := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready"}}}}
	task := wrappers.Task("ns", "t").Sidecars(v1.Sidecar{Name: "db", Image: "db-image", ReadinessProbe: ready}, v1.Sidecar{Name: "proxy", Image: "proxy-image"}).
		Step("a", "alpine", "true").Step("b", "alpine", "true").Obj()
	run := wrappers.TaskRun("ns", "run", "t").Obj()
	run.Spec.Timeouts.Pending = v1.NewDuration(time.Minute)
	pod, err := Build(run, task, Inputs{Name: "run-pod", Chained: chained})
	if err != nil {
		panic(err)
	}
	return pod
}

func TestSidecarStatesAndHolds(t *testing.T) {
	at := &metav1.Time{Time: testTime}
	pull := `Back-off pulling image "db-image"`
	for shape, chained := range shapes {
		pod := probedSidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		waiting := func(reason string) v1.SidecarState {
			return v1.SidecarState{Name: "proxy", State: v1.StepWaiting, Ready: ptr.To(false), Reason: reason}
		}
		tests := map[string]struct {
			status *wrappers.PodStatusWrapper
			states []v1.SidecarState
			held   *SidecarHold
		}{
			"being made": {status(), []v1.SidecarState{
				{Name: "db", State: v1.StepWaiting, Ready: ptr.To(false), Reason: "ContainerCreating"}, waiting("ContainerCreating")}, nil},
			"db's image cannot be pulled": {status().SidecarWaiting("db", "ImagePullBackOff", pull), []v1.SidecarState{
				{Name: "db", State: v1.StepWaiting, Ready: ptr.To(false), Reason: "ImagePullBackOff"}, waiting("ContainerCreating")},
				&SidecarHold{"db", "ImagePullBackOff: " + pull}},
			"db runs, not ready": {status().SidecarNotReady("db", false), []v1.SidecarState{
				{Name: "db", State: v1.StepRunning, Ready: ptr.To(false), StartedAt: at}, waiting("ContainerCreating")},
				&SidecarHold{"db", "running, not ready: its readiness probe has not passed"}},
			"db crashes": {status().SidecarWaiting("db", "CrashLoopBackOff", "back-off 10s").SidecarRestarted("db", 2, 1), []v1.SidecarState{
				{Name: "db", State: v1.StepWaiting, Ready: ptr.To(false), RestartCount: ptr.To[int32](2), Reason: "CrashLoopBackOff"}, waiting("ContainerCreating")},
				&SidecarHold{"db", "CrashLoopBackOff: back-off 10s; it exited with code 1 (Error), restarted 2 times"}},
			"db ready, proxy exited": {status().SidecarRunning("db").SidecarEnded("proxy", 2, "Error"), []v1.SidecarState{
				{Name: "db", State: v1.StepRunning, Ready: ptr.To(true), StartedAt: at},
				{Name: "proxy", State: v1.StepTerminated, Ready: ptr.To(false), ExitCode: ptr.To[int32](2), Reason: "Error", StartedAt: at, FinishedAt: at}},
				&SidecarHold{"proxy", "exited with code 2 (Error)"}},
			"steps run, db restarted": {status().Running(1).SidecarRunning("db").SidecarRunning("proxy").SidecarRestarted("db", 1, 137), []v1.SidecarState{
				{Name: "db", State: v1.StepRunning, Ready: ptr.To(true), RestartCount: ptr.To[int32](1), StartedAt: at},
				{Name: "proxy", State: v1.StepRunning, Ready: ptr.To(true), StartedAt: at}}, nil},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				p := withStatus(pod, tc.status.Obj())
				if diff := cmp.Diff(tc.states, SidecarStates(p)); diff != "" {
					t.Errorf("SidecarStates() mismatch (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.held, HeldBySidecar(p)); diff != "" {
					t.Errorf("HeldBySidecar() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestSidecarImagePullHold(t *testing.T) {
	pod := probedSidecarPod(true)
	started := testTime.Add(20 * time.Second)
	w := wrappers.PodStatus(pod).At(testTime).Waiting(0, "PodInitializing", "").SidecarWaiting("proxy", "ErrImagePull", "no such image")
	w.At(started).SidecarRunning("db")
	h := FindHeldStep(withStatus(pod, w.Obj()))
	if h == nil || h.Sidecar != "proxy" || !h.Since.Equal(started) || h.Reason != v1.ReasonImagePullFailed {
		t.Fatalf("FindHeldStep() = %+v, want sidecar proxy's pull held since db started", h)
	}
	want := failed(v1.ReasonSidecarFailed, `sidecar "proxy" could not pull image "proxy-image" for 5m0s: ErrImagePull: no such image`)
	if diff := cmp.Diff(want, h.Outcome(5*time.Minute)); diff != "" {
		t.Errorf("Outcome() mismatch (-want +got):\n%s", diff)
	}
}

func TestSidecarsOutliveSteps(t *testing.T) {
	for shape, chained := range shapes {
		pod := probedSidecarPod(chained)
		status := func() *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
		tests := map[string]struct {
			status *wrappers.PodStatusWrapper
			want   bool
		}{
			"steps run":                        {status().Running(1), false},
			"steps ended, sidecars run":        {status().Succeeded().Phase(corev1.PodRunning), true},
			"steps ended, one sidecar stopped": {status().Succeeded().Phase(corev1.PodRunning).SidecarEnded("db", 143, "Error"), true},
			"steps ended, sidecars stopped":    {status().Succeeded().Phase(corev1.PodRunning).SidecarEnded("db", 143, "Error").SidecarEnded("proxy", 0, "Completed"), false},
			"the Pod succeeded":                {status().Succeeded(), false},
		}
		for name, tc := range tests {
			t.Run(shape+"/"+name, func(t *testing.T) {
				if got := SidecarsOutliveSteps(withStatus(pod, tc.status.Obj())); got != tc.want {
					t.Errorf("SidecarsOutliveSteps() = %t, want %t", got, tc.want)
				}
			})
		}
	}
}
