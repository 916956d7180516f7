package runstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestPodTaskVersion: a Pod names the Task version Build wrote on it, and
// nothing for an annotation in any other shape: missing parts, a
// generation or resourceVersion that is no number, one part too many.
func TestPodTaskVersion(t *testing.T) {
	valid := TaskVersion{UID: "0b1c", Generation: 3, ResourceVersion: "4711"}
	tests := map[string]struct {
		annotation *string
		want       *TaskVersion
	}{
		"as written":                   {annotation: new(valid.String()), want: &valid},
		"none (release 6's Pod)":       {},
		"empty":                        {annotation: new("")},
		"two parts":                    {annotation: new("0b1c/3")},
		"four parts":                   {annotation: new("0b1c/3/4711/1")},
		"no UID":                       {annotation: new("/3/4711")},
		"generation not a number":      {annotation: new("0b1c/three/4711")},
		"generation 0":                 {annotation: new("0b1c/0/4711")},
		"generation negative":          {annotation: new("0b1c/-1/4711")},
		"resourceVersion not a number": {annotation: new("0b1c/3/latest")},
		"resourceVersion empty":        {annotation: new("0b1c/3/")},
		"resourceVersion too long":     {annotation: new("0b1c/3/123456789012345678901")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{}
			if tc.annotation != nil {
				pod.Annotations = map[string]string{AnnotationTaskVersion: *tc.annotation}
			}
			got, ok := PodTaskVersion(pod)
			if diff := cmp.Diff(tc.want != nil, ok); diff != "" {
				t.Fatalf("PodTaskVersion() names one (-want +got):\n%s", diff)
			}
			if ok {
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("PodTaskVersion() mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
	if _, ok := PodTaskVersion(nil); ok {
		t.Error("PodTaskVersion(nil) names a version")
	}
}

// TestTaskVersionOf: a Task read from the API server has a version, which
// holds for it until its spec changes or it is made anew; a Task made of a
// pinned or an inline spec has none.
func TestTaskVersionOf(t *testing.T) {
	task := &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", UID: "0b1c", Generation: 3, ResourceVersion: "4711"}}
	version, ok := TaskVersionOf(task)
	if !ok || !version.Of(task) {
		t.Fatalf("TaskVersionOf(%+v) = %+v, %t; want the Task's own version", task.ObjectMeta, version, ok)
	}
	relabeled := task.DeepCopy()
	relabeled.ResourceVersion, relabeled.Labels = "4712", map[string]string{"a": "b"}
	edited := task.DeepCopy()
	edited.Generation = 4
	remade := task.DeepCopy()
	remade.UID = "0b1d"
	for name, tc := range map[string]struct {
		task *v1.Task
		want bool
	}{"relabeled": {relabeled, true}, "edited": {edited, false}, "made anew": {remade, false}, "deleted": {nil, false}} {
		if got := version.Of(tc.task); got != tc.want {
			t.Errorf("version %s Of the Task %s = %t, want %t", version, name, got, tc.want)
		}
	}
	if _, ok := TaskVersionOf(TaskToRun(&v1.TaskRun{Spec: v1.TaskRunSpec{TaskSpec: &v1.TaskSpec{}}}, nil)); ok {
		t.Error("an inline spec's Task has a version")
	}
}
