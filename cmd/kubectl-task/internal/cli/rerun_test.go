package cli_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// everySetting is a run of build that sets every field a new run of the
// same work takes, was cancelled, and carries a label of the controller's.
func everySetting(name string) *v1.TaskRun {
	run := wrappers.TaskRun("", name, "build").
		Workspace(v1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "build-cache"}}).
		Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}}).
		ServiceAccount("builder").
		PodTemplate(v1.PodTemplate{NodeSelector: map[string]string{"disktype": "ssd"}, PriorityClassName: "batch-low"}).
		Timeout(20*time.Minute).
		Label("team", "platform").Label(runstate.LabelTaskRun, name).
		Cancelled().Obj()
	run.Spec.Retries = ptr.To[int32](2)
	run.Spec.RetryOn = []v1.RetryReason{v1.RetryOnStepFailed}
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](600)
	return run
}

// wantRepeated is the spec a new run of everySetting's work gets.
func wantRepeated() v1.TaskRunSpec {
	spec := everySetting("x").Spec
	spec.Status = ""
	return spec
}

func TestRerun(t *testing.T) {
	h := newHarness(t)
	h.Create(t, buildTask(), greetTask("greet"), everySetting("build-1"),
		// A run that gave no value for a param greet requires.
		wrappers.TaskRun("", "greet-bare", "greet").Obj(),
		wrappers.TaskRun("", "lost-run", "gone").Obj())

	t.Run("every setting but the cancel request and the controller's label", func(t *testing.T) {
		got := h.kubectlTask(t, "rerun", "build-1", "--name", "build-2")
		want := result{Stdout: "TaskRun build-2 started in namespace NS, with the settings of TaskRun build-1\nFollow its logs with: kubectl task logs build-2 -f -n NS\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("rerun (-want +got):\n%s", diff)
		}
		run := h.TaskRun(t, "build-2")
		if diff := cmp.Diff(wantRepeated(), run.Spec); diff != "" {
			t.Errorf("the new run's spec (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"team": "platform"}, run.Labels); diff != "" {
			t.Errorf("the new run's labels (-want +got):\n%s", diff)
		}
		if !runstate.CancelRequested(h.TaskRun(t, "build-1")) {
			t.Errorf("build-1 lost its cancel request")
		}
	})

	t.Run("a generated name, as start names runs", func(t *testing.T) {
		got := h.kubectlTask(t, "rerun", "build-1")
		want := regexp.MustCompile(`^TaskRun (build-[a-z0-9]{5}) started in namespace NS, with the settings of TaskRun build-1\n`)
		m := want.FindStringSubmatch(got.Stdout)
		if got.Code != 0 || m == nil {
			t.Fatalf("rerun: %+v, want stdout matching %s", got, want)
		}
		if diff := cmp.Diff(wantRepeated(), h.TaskRun(t, m[1]).Spec); diff != "" {
			t.Errorf("%s's spec (-want +got):\n%s", m[1], diff)
		}
	})

	refusals := map[string]struct {
		args []string
		want result
	}{
		"an unknown run": {
			args: []string{"rerun", "nope"},
			want: result{Code: 1, Stderr: `error: TaskRun "nope" not found in namespace "NS"; list the runs there with: kubectl task list -n NS` + "\n"},
		},
		"a run whose Task is gone": {
			args: []string{"rerun", "lost-run"},
			want: result{Code: 1, Stderr: `error: Task "gone" not found in namespace "NS"; list the Tasks there with: kubectl get tasks.minitask.dev -n NS` + "\n"},
		},
		"a run that lacks a value the Task requires": {
			args: []string{"rerun", "greet-bare"},
			want: result{Code: 1, Stderr: `error: Task "greet" now needs a value for param "greeting", which TaskRun greet-bare does not give; start it with: kubectl task start greet --last -p NAME=VALUE` + "\n"},
		},
		"a name taken": {
			args: []string{"rerun", "build-1", "--name", "build-1"},
			want: result{Code: 1, Stderr: `error: TaskRun "build-1" already exists in namespace "NS"; choose another --name, or leave it out to generate one` + "\n"},
		},
		"no run named": {
			args: []string{"rerun"},
			want: result{Code: 2, Stderr: "error: kubectl task rerun needs the name of a run; see 'kubectl task rerun --help'\n"},
		},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			before := h.TaskRunNames(t)
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
				t.Errorf("TaskRuns after the refusal (-before +after):\n%s", diff)
			}
		})
	}
}

func TestStartLast(t *testing.T) {
	h := newHarness(t)
	older := wrappers.TaskRun("", "greet-a", "greet").Param("greeting", "hello").Param("name", "old").Obj()
	h.Create(t, buildTask(), greetTask("greet"), greetTask("quiet"), older)
	// Created a second later, so that its creationTimestamp is the newer.
	time.Sleep(time.Second)
	h.Create(t, everySetting("build-1"),
		wrappers.TaskRun("", "greet-b", "greet").Param("greeting", "hi").Param("name", "you").Param("retired", "x").Label("team", "web").Obj())

	// In order: each run started becomes the newest of its Task.
	tests := []struct {
		name       string
		args       []string
		from       string
		wantStderr string
		wantSpec   v1.TaskRunSpec
		wantLabels map[string]string
	}{
		{
			name:       "the newest run's settings",
			args:       []string{"start", "build", "--last", "--name", "build-2"},
			from:       "build-1",
			wantSpec:   wantRepeated(),
			wantLabels: map[string]string{"team": "platform"},
		},
		{
			name: "flags override, one by one",
			args: []string{"start", "build", "--last", "--name", "build-3", "-w", "source=emptyDir", "-w", "scratch=pvc:tmp",
				"--serviceaccount", "deployer", "--timeout", "5m", "-l", "team=web", "-l", "tier=nightly"},
			from: "build-2",
			wantSpec: func() v1.TaskRunSpec {
				spec := wantRepeated()
				spec.Workspaces = []v1.WorkspaceBinding{
					{Name: "source", EmptyDir: &corev1.EmptyDirVolumeSource{}},
					spec.Workspaces[1],
					{Name: "scratch", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tmp"}},
				}
				spec.ServiceAccountName = "deployer"
				spec.Timeouts.Total = v1.NewDuration(5 * time.Minute)
				return spec
			}(),
			wantLabels: map[string]string{"team": "web", "tier": "nightly"},
		},
		{
			name:       "a param overridden, one the Task no longer declares left out",
			args:       []string{"start", "greet", "--last", "--name", "greet-c", "-p", "name=me"},
			from:       "greet-b",
			wantStderr: `warning: TaskRun greet-b's param "retired" is left out: Task "greet" does not declare it any more` + "\n",
			wantSpec: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "greet"},
				Params: []v1.Param{{Name: "greeting", Value: *v1.NewStringValue("hi")}, {Name: "name", Value: *v1.NewStringValue("me")}}},
			wantLabels: map[string]string{"team": "web"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			want := result{Stderr: tc.wantStderr, Stdout: "TaskRun " + tc.args[4] + " started in namespace NS, with the settings of TaskRun " + tc.from +
				"\nFollow its logs with: kubectl task logs " + tc.args[4] + " -f -n NS\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
			run := h.TaskRun(t, tc.args[4])
			if diff := cmp.Diff(tc.wantSpec, run.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, run.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}

	refusals := map[string]struct {
		args []string
		want result
	}{
		"a Task with no runs": {
			args: []string{"start", "quiet", "--last"},
			want: result{Code: 1, Stderr: `error: Task "quiet" has no runs in namespace "NS" for --last to start again; start it without --last` + "\n"},
		},
		"a workspace the Task does not declare, given as a flag": {
			args: []string{"start", "build", "--last", "-w", "sorce=emptyDir"},
			want: result{Code: 2, Stderr: `error: Task "build" has no workspace "sorce"; its workspaces are: source, settings, scratch; see 'kubectl task start --help'` + "\n"},
		},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			before := h.TaskRunNames(t)
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
				t.Errorf("TaskRuns after the refusal (-before +after):\n%s", diff)
			}
		})
	}
}
