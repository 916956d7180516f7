package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/controllers/internal/wrappers"
	"github.com/minitask-dev/minitask/internal/podnames"
)

func TestPodNameFor(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := map[string]struct {
		run  string
		want string
	}{
		"short name":                 {"build", "build-pod"},
		"name that just fits":        {strings.Repeat("a", 59), strings.Repeat("a", 59) + "-pod"},
		"long name":                  {long, strings.Repeat("a", 48) + "-" + hashOf(long) + "-pod"},
		"cut that would end in dash": {strings.Repeat("a", 47) + "-" + long, strings.Repeat("a", 47) + "-" + hashOf(strings.Repeat("a", 47)+"-"+long) + "-pod"},
		"cut that would end in dot":  {strings.Repeat("a", 46) + ".." + long, strings.Repeat("a", 46) + "-" + hashOf(strings.Repeat("a", 46)+".."+long) + "-pod"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := podNameFor(wrappers.TaskRun("ns", tc.run, "task").Obj())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("podNameFor() mismatch (-want +got):\n%s", diff)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || len(got) > podnames.MaxLength {
				t.Errorf("podNameFor() = %q (%d characters), not a valid Pod name: %v", got, len(got), errs)
			}
		})
	}
}

func TestTaskRunLabelValue(t *testing.T) {
	for _, name := range []string{"run", strings.Repeat("r", 63), strings.Repeat("r", 64), strings.Repeat("r.", 120) + "r"} {
		got := taskRunLabelValue(wrappers.TaskRun("ns", name, "task").Obj())
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("taskRunLabelValue(%d characters) = %q, not a label value: %v", len(name), got, errs)
		}
		if len(name) <= podnames.MaxLength && got != name {
			t.Errorf("taskRunLabelValue(%q) = %q, want the name itself", name, got)
		}
	}
}

func TestParamValues(t *testing.T) {
	tests := map[string]struct {
		task        *v1beta1.Task
		run         *v1beta1.TaskRun
		wantValues  map[string]string
		wantMissing []string
	}{
		"no params": {
			task:       wrappers.Task("ns", "t").Obj(),
			run:        wrappers.TaskRun("ns", "r", "t").Obj(),
			wantValues: map[string]string{},
		},
		"default used": {
			task:       wrappers.Task("ns", "t").ParamDefault("greeting", "hello").Obj(),
			run:        wrappers.TaskRun("ns", "r", "t").Obj(),
			wantValues: map[string]string{"greeting": "hello"},
		},
		"run's value wins over default": {
			task:       wrappers.Task("ns", "t").ParamDefault("greeting", "hello").Obj(),
			run:        wrappers.TaskRun("ns", "r", "t").Param("greeting", "hi").Obj(),
			wantValues: map[string]string{"greeting": "hi"},
		},
		"empty value counts as given": {
			task:       wrappers.Task("ns", "t").Param("flags").Obj(),
			run:        wrappers.TaskRun("ns", "r", "t").Param("flags", "").Obj(),
			wantValues: map[string]string{"flags": ""},
		},
		"undeclared value ignored": {
			task:       wrappers.Task("ns", "t").Obj(),
			run:        wrappers.TaskRun("ns", "r", "t").Param("extra", "x").Obj(),
			wantValues: map[string]string{},
		},
		"missing values listed sorted": {
			task:        wrappers.Task("ns", "t").Param("zeta").ParamDefault("mid", "m").Param("alpha").Param("given").Obj(),
			run:         wrappers.TaskRun("ns", "r", "t").Param("given", "g").Obj(),
			wantValues:  map[string]string{"mid": "m", "given": "g"},
			wantMissing: []string{"alpha", "zeta"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			values, missing := paramValues(tc.task, tc.run)
			if diff := cmp.Diff(tc.wantValues, values); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("missing mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodForRun(t *testing.T) {
	labels := map[string]string{LabelManagedBy: ManagedByValue, LabelTaskRun: "run"}
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
				Containers:     []corev1.Container{{Name: podnames.StepContainer(strings.Repeat("s", 63)), Image: "alpine:3"}},
			},
			wantAnnotations: map[string]string{podnames.AnnotationStepNames: `["short","` + strings.Repeat("s", 63) + `"]`},
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

func TestActiveDeadlineFor(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		timeout  time.Duration
		deadline time.Time
		want     *int64
	}{
		"no timeout":             {0, now, nil},
		"whole timeout left":     {time.Hour, now.Add(time.Hour), ptr.To[int64](3600)},
		"part of a second left":  {time.Hour, now.Add(1500 * time.Millisecond), ptr.To[int64](2)},
		"deadline passed":        {time.Hour, now.Add(-time.Minute), ptr.To[int64](1)},
		"beyond the API's range": {1 << 62, now.Add(1 << 62), ptr.To[int64](math.MaxInt32)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, activeDeadlineFor(tc.timeout, tc.deadline, now)); diff != "" {
				t.Errorf("activeDeadlineFor() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoppingDeadline(t *testing.T) {
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{Status: corev1.PodStatus{StartTime: &metav1.Time{Time: started}}}
	for elapsed, want := range map[time.Duration]int64{90*time.Second + 700*time.Millisecond: 90, 200 * time.Millisecond: 1, 0: 1} {
		if got := stoppingDeadline(pod, started.Add(elapsed)); got != want {
			t.Errorf("stoppingDeadline(%s after start) = %d, want %d", elapsed, got, want)
		}
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

// hashOf is the hash that a long name carries: the first hex digits of its SHA-256.
func hashOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:10]
}
