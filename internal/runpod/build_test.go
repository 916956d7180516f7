package runpod

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/params"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestBuild(t *testing.T) {
	resultsMount := []corev1.VolumeMount{{Name: "minitask-results", MountPath: "/minitask/results"}}
	labels := map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue, runstate.LabelTaskRun: "run"}
	tests := map[string]struct {
		task            *v1.Task
		values          params.Values
		deadline        *int64
		want            corev1.PodSpec
		wantAnnotations map[string]string
	}{
		"one step: no init containers, entrypoint kept without script": {
			task: wrappers.Task("ns", "t").Step("only", "alpine:3", "").Obj(),
			want: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				Containers:                   []corev1.Container{{Name: "step-only", Image: "alpine:3"}},
			},
		},
		"steps in order, params substituted, deadline set": {
			task: wrappers.Task("ns", "t").
				Step("fetch", "alpine:$(params.tag)", "echo $(params.greeting) $(params.unknown) $HOME").
				Step("build", "golang:1", "go build").
				Step("push", "$(params.registry)/pusher", "push $(params.tag)").Obj(),
			values:   params.Values{Params: map[string]string{"tag": "3", "greeting": "hi", "registry": "r.io"}},
			deadline: ptr.To[int64](60),
			want: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				ActiveDeadlineSeconds:        ptr.To[int64](60),
				AutomountServiceAccountToken: ptr.To(false),
				InitContainers: []corev1.Container{
					{Name: "step-fetch", Image: "alpine:3", Command: stepscript.Command("echo hi $(params.unknown) $HOME", "", stepscript.Timer{}, stepscript.Protocol{MessageLimit: 4096})},
					{Name: "step-build", Image: "golang:1", Command: stepscript.Command("go build", "", stepscript.Timer{}, stepscript.Protocol{MessageLimit: 4096})},
				},
				Containers: []corev1.Container{
					{Name: "step-push", Image: "r.io/pusher", Command: stepscript.Command("push 3", "", stepscript.Timer{}, stepscript.Protocol{MessageLimit: 4096})},
				},
			},
			wantAnnotations: map[string]string{runstate.AnnotationScriptSteps: `["step-fetch","step-build","step-push"]`},
		},
		"results: every step mounts their volume, script steps are told their names, paths replaced everywhere": {
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "probe", Image: "alpine:3", Script: "echo 1 > $(results.version.path)", OnError: v1.OnErrorContinue},
				v1.Step{Name: "tool", Image: "tool", Command: []string{"tool"}, Args: []string{"--out=$(results.digest.path)"},
					WorkingDir: "$(results.digest.path)", Env: []corev1.EnvVar{{Name: "OUT", Value: "$(results.version.path)"}}},
				v1.Step{Name: "report", Image: "alpine:3", Script: "cat $(results.digest.path)"},
			).Results("version", "digest").Obj(),
			want: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				Volumes:                      []corev1.Volume{{Name: "minitask-results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				InitContainers: []corev1.Container{
					{Name: "step-probe", Image: "alpine:3", Command: stepscript.Command("echo 1 > /minitask/results/version", v1.OnErrorContinue, stepscript.Timer{}, stepscript.Protocol{Results: []string{"version", "digest"}, MessageLimit: 4096}),
						VolumeMounts: resultsMount},
					{Name: "step-tool", Image: "tool", Command: []string{"tool"}, Args: []string{"--out=/minitask/results/digest"},
						WorkingDir: "/minitask/results/digest", Env: []corev1.EnvVar{{Name: "OUT", Value: "/minitask/results/version"}}, VolumeMounts: resultsMount},
				},
				Containers: []corev1.Container{
					{Name: "step-report", Image: "alpine:3", Command: stepscript.Command("cat /minitask/results/digest", "", stepscript.Timer{}, stepscript.Protocol{Results: []string{"version", "digest"}, MessageLimit: 4096}), VolumeMounts: resultsMount},
				},
			},
			wantAnnotations: map[string]string{
				runstate.AnnotationResults:     `["version","digest"]`,
				runstate.AnnotationScriptSteps: `["step-probe","step-report"]`,
			},
		},
		"step name too long for a container name: shortened, kept whole in an annotation": {
			task: wrappers.Task("ns", "t").Step("short", "alpine:3", "").Step(strings.Repeat("s", 63), "alpine:3", "").Obj(),
			want: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				InitContainers:               []corev1.Container{{Name: "step-short", Image: "alpine:3"}},
				Containers:                   []corev1.Container{{Name: runstate.StepContainer(strings.Repeat("s", 63)), Image: "alpine:3"}},
			},
			wantAnnotations: map[string]string{runstate.AnnotationStepNames: `["short","` + strings.Repeat("s", 63) + `"]`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), tc.task, Inputs{Name: "run-pod", Params: tc.values, ActiveDeadlineSeconds: tc.deadline})
			if err != nil {
				t.Fatal(err)
			}
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run-pod", Labels: labels, Annotations: tc.wantAnnotations},
				Spec:       tc.want,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Build() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildBudget: a Pod whose expanded texts (images, scripts, commands,
// args, working directories, env values), params and workspace paths
// expanded, pass 1 MiB is an error that gives the size, found without
// building it.
func TestBuildBudget(t *testing.T) {
	bomb := strings.Repeat("echo $(params.x)\n", 1000)
	manySteps := func(n int, script string) *v1.Task {
		w := wrappers.Task("ns", "t").Param("x")
		for i := range n {
			w.Step(fmt.Sprintf("s%d", i), "alpine", script)
		}
		return w.Obj()
	}
	stepsOf := func(n int, step func(i int) v1.Step) *v1.Task {
		w := wrappers.Task("ns", "t").Param("x")
		steps := make([]v1.Step, n)
		for i := range steps {
			steps[i] = step(i)
		}
		return w.Steps(steps...).Obj()
	}
	tests := map[string]struct {
		task    *v1.Task
		value   string
		wantErr *TooLargeError
	}{
		"exactly 1 MiB": {
			// One step: the image's 6 bytes and a script of the rest.
			task:  manySteps(1, "$(params.x)"),
			value: strings.Repeat("v", maxPodText-len("alpine")),
		},
		"one byte over": {
			task:    manySteps(1, "$(params.x)"),
			value:   strings.Repeat("v", maxPodText-len("alpine")+1),
			wantErr: &TooLargeError{size: maxPodText + 1, limit: maxPodText},
		},
		"the bomb in env values: 20 steps of 100 values of 10 references each to 64 KiB": {
			task: stepsOf(20, func(i int) v1.Step {
				env := make([]corev1.EnvVar, 100)
				for j := range env {
					env[j] = corev1.EnvVar{Name: fmt.Sprintf("V%d", j), Value: strings.Repeat("$(params.x)", 10)}
				}
				return v1.Step{Name: fmt.Sprintf("s%d", i), Image: "alpine", Env: env}
			}),
			value: strings.Repeat("v", 64<<10),
			wantErr: &TooLargeError{
				size:  20 * (int64(len("alpine")) + 100*10*(64<<10)),
				limit: maxPodText,
			},
		},
		"the bomb in args, command and workingDir": {
			task: stepsOf(20, func(i int) v1.Step {
				return v1.Step{
					Name: fmt.Sprintf("s%d", i), Image: "alpine",
					Command:    []string{"$(params.x)"},
					Args:       []string{bomb, bomb},
					WorkingDir: "/$(params.x)",
				}
			}),
			value: strings.Repeat("v", 64<<10),
			wantErr: &TooLargeError{
				size: 20 * (int64(len("alpine")) + 64<<10 + 2*(int64(len(bomb))+1000*(64<<10-int64(len("$(params.x)")))) +
					1 + 64<<10),
				limit: maxPodText,
			},
		},
		"workspace paths count: one byte over with a long mountPath": {
			task: func() *v1.Task {
				t := stepsOf(1, func(int) v1.Step {
					return v1.Step{Name: "s", Image: "alpine", Args: []string{"$(params.x)", "$(workspaces.w.path)"}}
				})
				t.Spec.Workspaces = []v1.WorkspaceDeclaration{{Name: "w", MountPath: "/" + strings.Repeat("p", 4095)}}
				return t
			}(),
			value:   strings.Repeat("v", maxPodText-len("alpine")-4096+1),
			wantErr: &TooLargeError{size: maxPodText + 1, limit: maxPodText},
		},
		"the bomb: 20 steps of 1,000 references to 64 KiB": {
			task:  manySteps(20, bomb),
			value: strings.Repeat("v", 64<<10),
			wantErr: &TooLargeError{
				size:  20 * (int64(len("alpine")) + int64(len(bomb)) + 1000*(64<<10-int64(len("$(params.x)")))),
				limit: maxPodText,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod, err := Build(wrappers.TaskRun("ns", "run", "t").Obj(), tc.task, Inputs{Name: "run-pod", Params: params.Values{Params: map[string]string{"x": tc.value}}})
			var got *TooLargeError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Build() error %v, want a *TooLargeError", err)
			}
			if diff := cmp.Diff(tc.wantErr, got, cmp.AllowUnexported(TooLargeError{})); diff != "" {
				t.Errorf("Build() error (-want +got):\n%s", diff)
			}
			if (pod == nil) != (tc.wantErr != nil) {
				t.Errorf("Build() returned Pod %v with error %v, want exactly one", pod != nil, err)
			}
		})
	}
}
