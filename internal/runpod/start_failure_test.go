package runpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The runtimes' messages for an executable that cannot be run, as the
// kubelet reports them.
const (
	// containerd with runc: the container terminated, StartError, code 128.
	runcNoShell = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown`
	runcNoGCC   = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "gcc": executable file not found in $PATH: unknown`
	// crun, and CRI-O when it creates the container: the kubelet makes it
	// again and again, CreateContainerError.
	crunNoShell = "executable file `/bin/sh` not found: No such file or directory"
	crioNoGCC   = "container create failed: executable file `gcc` not found in $PATH: No such file or directory"
)

// TestStepFailures: how a step failed, in the run's StepFailed message and
// the step's status: killed for its memory, or never started because its
// image cannot run it, which fails the run at once even while the kubelet
// reports the container waiting to be made again.
func TestStepFailures(t *testing.T) {
	scripts := threeStepPod()
	task := wrappers.Task("ns", "t").Steps(
		v1.Step{Name: "a", Image: "alpine", Script: "true"},
		v1.Step{Name: "b", Image: "gcc:14", Command: []string{"gcc"}},
		v1.Step{Name: "c", Image: "alpine", Script: "true"},
	).Obj()
	commands := podFor(task)
	status := func(pod *corev1.Pod) *wrappers.PodStatusWrapper { return wrappers.PodStatus(pod).At(testTime) }
	stepFailed := func(message string) *Condition {
		return &Condition{metav1.ConditionFalse, v1.ReasonStepFailed, message}
	}
	type step struct {
		Name     string
		State    v1.StepContainerState
		Reason   string
		ExitCode *int32
	}
	tests := map[string]struct {
		pod *corev1.Pod
		// i is the step looked at; want is Outcome's.
		i        int
		want     *Condition
		wantStep step
	}{
		"killed for its memory": {
			pod: withStatus(scripts, status(scripts).OOMKilled(1).Obj()), i: 1,
			want:     stepFailed(`step "b" exited with code 137 (OOMKilled: killed for using too much memory)`),
			wantStep: step{"b", v1.StepTerminated, "OOMKilled", ptr.To[int32](137)},
		},
		"a script step whose image has no shell (containerd and runc)": {
			pod: withStatus(scripts, status(scripts).StartError(0, runcNoShell).Obj()),
			want: stepFailed(`step "a" could not run its script: its image "alpine" has no shell (/bin/sh): StartError: ` +
				runcNoShell),
			wantStep: step{"a", v1.StepTerminated, "NoShell", ptr.To[int32](128)},
		},
		"the last step, too": {
			pod: withStatus(scripts, status(scripts).StartError(2, runcNoShell).Obj()), i: 2,
			want:     stepFailed(`step "c" could not run its script: its image "alpine" has no shell (/bin/sh): StartError: ` + runcNoShell),
			wantStep: step{"c", v1.StepTerminated, "NoShell", ptr.To[int32](128)},
		},
		"a command step whose executable is missing (containerd and runc)": {
			pod: withStatus(commands, status(commands).StartError(1, runcNoGCC).Obj()), i: 1,
			want:     stepFailed(`step "b" could not start: StartError: ` + runcNoGCC),
			wantStep: step{"b", v1.StepTerminated, "StartError", ptr.To[int32](128)},
		},
		"a script step whose image has no shell, waiting to be made again (crun): failed at once": {
			pod:      withStatus(scripts, status(scripts).Waiting(0, "CreateContainerError", crunNoShell).Obj()),
			want:     stepFailed(`step "a" could not run its script: its image "alpine" has no shell (/bin/sh): CreateContainerError: ` + crunNoShell),
			wantStep: step{"a", v1.StepTerminated, "NoShell", nil},
		},
		"a command whose executable is missing, waiting to be made again (CRI-O): failed at once": {
			pod: withStatus(commands, status(commands).Waiting(1, "CreateContainerError", crioNoGCC).Obj()), i: 1,
			want:     stepFailed(`step "b" could not start: CreateContainerError: ` + crioNoGCC),
			wantStep: step{"b", v1.StepTerminated, "CreateContainerError", nil},
		},
		"a start the runtime refused, waiting (RunContainerError, runc's words)": {
			pod: withStatus(commands, status(commands).Waiting(1, "RunContainerError", runcNoGCC).Obj()), i: 1,
			want:     stepFailed(`step "b" could not start: RunContainerError: ` + runcNoGCC),
			wantStep: step{"b", v1.StepTerminated, "RunContainerError", nil},
		},
		"a command step's missing shell is its own command's, not a script's": {
			pod: withStatus(commands, status(commands).StartError(1, runcNoShell).Obj()), i: 1,
			want:     stepFailed(`step "b" could not start: StartError: ` + runcNoShell),
			wantStep: step{"b", v1.StepTerminated, "StartError", ptr.To[int32](128)},
		},
		"a container that cannot be made for another cause waits (PodConfigFailed's to judge)": {
			pod:      withStatus(scripts, status(scripts).Waiting(0, "CreateContainerError", `failed to reserve container name "step-a_run-pod": name is reserved`).Obj()),
			wantStep: step{"a", v1.StepWaiting, "CreateContainerError", nil},
		},
		"a missing Secret waits": {
			pod:      withStatus(scripts, status(scripts).Waiting(0, "CreateContainerConfigError", `secret "git" not found`).Obj()),
			wantStep: step{"a", v1.StepWaiting, "CreateContainerConfigError", nil},
		},
		"a script whose command is missing exits 127, as ever": {
			pod:      withStatus(scripts, status(scripts).StepFailed(0, 127).Obj()),
			want:     stepFailed(`step "a" exited with code 127`),
			wantStep: step{"a", v1.StepTerminated, "Error", ptr.To[int32](127)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			steps := StepStates(tc.pod)
			if diff := cmp.Diff(tc.want, Outcome(tc.pod, steps)); diff != "" {
				t.Errorf("Outcome() (-want +got):\n%s", diff)
			}
			s := steps[tc.i]
			if diff := cmp.Diff(tc.wantStep, step{s.Name, s.State, s.Reason, s.ExitCode}); diff != "" {
				t.Errorf("status.steps[%d] (-want +got):\n%s", tc.i, diff)
			}
		})
	}
}
