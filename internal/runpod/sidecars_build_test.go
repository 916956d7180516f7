package runpod

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestStartupProbeCoversTheBound: a sidecar's readinessProbe made into a
// startupProbe fails for good only once the bound has passed, so that the
// kubelet never restarts a sidecar the controller still waits for.
func TestStartupProbeCoversTheBound(t *testing.T) {
	exec := corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready"}}}
	tests := map[string]struct {
		readiness corev1.Probe
		bound     time.Duration
		want      int32
	}{
		"every second for 5 minutes":        {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 1}, 5 * time.Minute, 301},
		"the kubelet's 10 s period":         {corev1.Probe{ProbeHandler: exec}, 5 * time.Minute, 31},
		"a period that does not divide":     {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 7}, time.Minute, 10},
		"after the delay":                   {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 1, InitialDelaySeconds: 20}, time.Minute, 41},
		"a delay past the bound":            {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 1, InitialDelaySeconds: 120}, time.Minute, 3},
		"never fewer than the probe's own":  {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 10, FailureThreshold: 20}, time.Minute, 20},
		"no bound: it never fails":          {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 1}, 0, math.MaxInt32},
		"a bound past what an int32 counts": {corev1.Probe{ProbeHandler: exec, PeriodSeconds: 1}, 100 * 365 * 24 * time.Hour, math.MaxInt32},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := startupProbeOf(&tc.readiness, tc.bound)
			if got.FailureThreshold != tc.want || got.SuccessThreshold != 1 || got.Exec == nil ||
				got.PeriodSeconds != tc.readiness.PeriodSeconds || got.InitialDelaySeconds != tc.readiness.InitialDelaySeconds {
				t.Errorf("startupProbeOf() = %+v, want the readinessProbe's check, delay and period, success 1, failures %d", got, tc.want)
			}
		})
	}
}

// TestSidecarsComeFirst: in either shape, a Task's sidecars are the Pod's
// first init containers, restartable, named sidecar-NAME (or with the names
// annotation), and no steps.
func TestSidecarsComeFirst(t *testing.T) {
	long := "a-sidecar-whose-name-is-longer-than-fifty-five-characters-xyz"
	task := wrappers.Task("ns", "t").Sidecars(v1.Sidecar{Name: "db", Image: "postgres"}, v1.Sidecar{Name: long, Image: "nginx"}).
		Step("a", "alpine", "true").Step("b", "alpine", "true").Obj()
	for shape, chained := range shapes {
		t.Run(shape, func(t *testing.T) {
			pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), task, Inputs{Name: "run-pod", Chained: chained})
			if err != nil {
				t.Fatal(err)
			}
			sidecars := runstate.Sidecars(pod)
			if len(sidecars) != 2 || sidecars[0] != (runstate.Step{Name: "db", Container: "sidecar-db"}) || sidecars[1].Name != long {
				t.Errorf("runstate.Sidecars() = %v, want db and the long name", sidecars)
			}
			for i := range 2 {
				if c := pod.Spec.InitContainers[i]; !runstate.IsNativeSidecar(c) {
					t.Errorf("init container %d, %s, is no native sidecar", i, c.Name)
				}
			}
			if steps := runstate.Steps(pod); len(steps) != 2 || steps[0].Name != "a" || steps[1].Name != "b" {
				t.Errorf("runstate.Steps() = %v, want a and b", steps)
			}
			if c := pod.Spec.InitContainers[0]; c.StartupProbe != nil || c.ReadinessProbe != nil || !ptr.Equal(c.RestartPolicy, ptr.To(corev1.ContainerRestartPolicyAlways)) {
				t.Errorf("sidecar-db = %+v, want no probe and restartPolicy Always", c)
			}
		})
	}
}
