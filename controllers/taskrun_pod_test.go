package controllers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestPodForRun(t *testing.T) {
	labels := map[string]string{runstate.LabelManagedBy: runstate.ManagedByValue, runstate.LabelTaskRun: "run"}
	tests := map[string]struct {
		task            *v1beta1.Task
		values          map[string]string
		deadline        *int64
		want            corev1.PodSpec
		wantAnnotations map[string]string
	}{
		"one step: no init containers, entrypoint kept without script": {
			task: wrappers.Task("ns", "t").Step("only", "alpine:3", "").Obj(),
			want: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "step-only", Image: "alpine:3"}},
			},
		},
		"steps in order, params substituted, deadline set": {
			task: wrappers.Task("ns", "t").
				Step("fetch", "alpine:$(params.tag)", "echo $(params.greeting) $(params.unknown) $HOME").
				Step("build", "golang:1", "go build").
				Step("push", "$(params.registry)/pusher", "push $(params.tag)").Obj(),
			values:   map[string]string{"tag": "3", "greeting": "hi", "registry": "r.io"},
			deadline: ptr.To[int64](60),
			want: corev1.PodSpec{
				RestartPolicy:         corev1.RestartPolicyNever,
				ActiveDeadlineSeconds: ptr.To[int64](60),
				InitContainers: []corev1.Container{
					{Name: "step-fetch", Image: "alpine:3", Command: []string{"/bin/sh", "-c", "echo hi $(params.unknown) $HOME"}},
					{Name: "step-build", Image: "golang:1", Command: []string{"/bin/sh", "-c", "go build"}},
				},
				Containers: []corev1.Container{
					{Name: "step-push", Image: "r.io/pusher", Command: []string{"/bin/sh", "-c", "push 3"}},
				},
			},
		},
		"step name too long for a container name: shortened, kept whole in an annotation": {
			task: wrappers.Task("ns", "t").Step("short", "alpine:3", "").Step(strings.Repeat("s", 63), "alpine:3", "").Obj(),
			want: corev1.PodSpec{
				RestartPolicy:  corev1.RestartPolicyNever,
				InitContainers: []corev1.Container{{Name: "step-short", Image: "alpine:3"}},
				Containers:     []corev1.Container{{Name: runstate.StepContainer(strings.Repeat("s", 63)), Image: "alpine:3"}},
			},
			wantAnnotations: map[string]string{runstate.AnnotationStepNames: `["short","` + strings.Repeat("s", 63) + `"]`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := podForRun(wrappers.TaskRun("ns", "run", "t").Obj(), tc.task, tc.values, tc.deadline)
			if err != nil {
				t.Fatal(err)
			}
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run-pod", Labels: labels, Annotations: tc.wantAnnotations},
				Spec:       tc.want,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("podForRun() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodForRunBudget: a Pod whose images and scripts, params expanded, pass
// 1 MiB is an error that gives the size, found without building it.
func TestPodForRunBudget(t *testing.T) {
	bomb := strings.Repeat("echo $(params.x)\n", 1000)
	manySteps := func(n int, script string) *v1beta1.Task {
		w := wrappers.Task("ns", "t").Param("x")
		for i := range n {
			w.Step(fmt.Sprintf("s%d", i), "alpine", script)
		}
		return w.Obj()
	}
	tests := map[string]struct {
		task    *v1beta1.Task
		value   string
		wantErr *podTooLargeError
	}{
		"exactly 1 MiB": {
			// One step: the image's 6 bytes and a script of the rest.
			task:  manySteps(1, "$(params.x)"),
			value: strings.Repeat("v", maxPodText-len("alpine")),
		},
		"one byte over": {
			task:    manySteps(1, "$(params.x)"),
			value:   strings.Repeat("v", maxPodText-len("alpine")+1),
			wantErr: &podTooLargeError{size: maxPodText + 1, limit: maxPodText},
		},
		"the bomb: 20 steps of 1,000 references to 64 KiB": {
			task:  manySteps(20, bomb),
			value: strings.Repeat("v", 64<<10),
			wantErr: &podTooLargeError{
				size:  20 * (int64(len("alpine")) + int64(len(bomb)) + 1000*(64<<10-int64(len("$(params.x)")))),
				limit: maxPodText,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod, err := podForRun(wrappers.TaskRun("ns", "run", "t").Obj(), tc.task, map[string]string{"x": tc.value}, nil)
			var got *podTooLargeError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("podForRun() error %v, want a *podTooLargeError", err)
			}
			if diff := cmp.Diff(tc.wantErr, got, cmp.AllowUnexported(podTooLargeError{})); diff != "" {
				t.Errorf("podForRun() error (-want +got):\n%s", diff)
			}
			if (pod == nil) != (tc.wantErr != nil) {
				t.Errorf("podForRun() returned Pod %v with error %v, want exactly one", pod != nil, err)
			}
		})
	}
}

func TestNeverStarted(t *testing.T) {
	pod, err := podForRun(wrappers.TaskRun("ns", "run", "t").Obj(),
		wrappers.Task("ns", "t").Step("a", "alpine", "").Step("b", "alpine", "").Obj(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		status corev1.PodStatus
		want   bool
	}{
		"not taken up by a kubelet": {corev1.PodStatus{Phase: corev1.PodPending}, true},
		"every container waits":     {wrappers.PodStatus(pod).Obj(), true},
		"first step running":        {wrappers.PodStatus(pod).Running(0).Obj(), false},
		"second step running":       {wrappers.PodStatus(pod).Running(1).Obj(), false},
		"first step failed":         {wrappers.PodStatus(pod).StepFailed(0, 1).Obj(), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Status = tc.status
			if got := neverStarted(p); got != tc.want {
				t.Errorf("neverStarted() = %t, want %t", got, tc.want)
			}
		})
	}
}
