package conversion

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Fluent builders, so that each test case reads as what differs from a
// default object. Every default carries the same rich metadata, which every
// case thereby checks is passed through unchanged.

var (
	created  = metav1.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	started  = metav1.Date(2024, 5, 1, 10, 1, 0, 0, time.UTC)
	finished = metav1.Date(2024, 5, 1, 10, 6, 0, 0, time.UTC)
	later    = metav1.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
)

// testMeta is metadata with one of everything conversion must not change.
func testMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              "nightly",
		Namespace:         "ci",
		UID:               "0f6a3d52-6b1c-4c9e-9a51-6f0e2b7d9c11",
		ResourceVersion:   "4711",
		Generation:        3,
		CreationTimestamp: created,
		Labels:            map[string]string{"team": "build"},
		Annotations:       map[string]string{"example.com/note": "keep me"},
		Finalizers:        []string{"example.com/cleanup"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "5a1c",
			Controller: ptr.To(true),
		}},
	}
}

// succeeded returns a Succeeded condition with nothing but what the phase
// table sets.
func succeeded(status metav1.ConditionStatus, reason v1beta1.TaskRunReason, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: status, Reason: string(reason), LastTransitionTime: at}
}

// stash wraps the lost fields' JSON as the annotation holds it.
func stash(lostJSON string) string {
	return `{"v1beta1":` + lostJSON + `}`
}

func setAnnotation(meta *metav1.ObjectMeta, key, value string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = value
}

// hubTaskBuilder builds a v1beta1 Task with one step.
type hubTaskBuilder struct{ obj v1beta1.Task }

func hubTask() *hubTaskBuilder {
	return &hubTaskBuilder{obj: v1beta1.Task{
		ObjectMeta: testMeta(),
		Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{
			{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
		}},
	}}
}

func (b *hubTaskBuilder) Description(d string) *hubTaskBuilder {
	b.obj.Spec.Description = d
	return b
}

func (b *hubTaskBuilder) Steps(steps ...v1beta1.Step) *hubTaskBuilder {
	b.obj.Spec.Steps = steps
	return b
}

func (b *hubTaskBuilder) Params(params ...v1beta1.ParamSpec) *hubTaskBuilder {
	b.obj.Spec.Params = params
	return b
}

func (b *hubTaskBuilder) Annotations(a map[string]string) *hubTaskBuilder {
	b.obj.Annotations = a
	return b
}

func (b *hubTaskBuilder) Annotation(key, value string) *hubTaskBuilder {
	setAnnotation(&b.obj.ObjectMeta, key, value)
	return b
}

func (b *hubTaskBuilder) Obj() *v1beta1.Task {
	return &b.obj
}

// spokeTaskBuilder builds a v1alpha1 Task with the same step as hubTask.
type spokeTaskBuilder struct{ obj v1alpha1.Task }

func spokeTask() *spokeTaskBuilder {
	return &spokeTaskBuilder{obj: v1alpha1.Task{
		ObjectMeta: testMeta(),
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{
			{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
		}},
	}}
}

func (b *spokeTaskBuilder) Steps(steps ...v1alpha1.Step) *spokeTaskBuilder {
	b.obj.Spec.Steps = steps
	return b
}

func (b *spokeTaskBuilder) Annotations(a map[string]string) *spokeTaskBuilder {
	b.obj.Annotations = a
	return b
}

func (b *spokeTaskBuilder) Annotation(key, value string) *spokeTaskBuilder {
	setAnnotation(&b.obj.ObjectMeta, key, value)
	return b
}

// Stash sets the conversion annotation to the given lost fields' JSON.
func (b *spokeTaskBuilder) Stash(lostJSON string) *spokeTaskBuilder {
	return b.Annotation(AnnotationConversionData, stash(lostJSON))
}

func (b *spokeTaskBuilder) Obj() *v1alpha1.Task {
	return &b.obj
}

// hubRunBuilder builds a v1beta1 TaskRun of Task "build" that has no status.
type hubRunBuilder struct{ obj v1beta1.TaskRun }

func hubRun() *hubRunBuilder {
	return &hubRunBuilder{obj: v1beta1.TaskRun{
		ObjectMeta: testMeta(),
		Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "build"}},
	}}
}

func (b *hubRunBuilder) TaskRef(name string) *hubRunBuilder {
	b.obj.Spec.TaskRef.Name = name
	return b
}

func (b *hubRunBuilder) Params(params ...v1beta1.Param) *hubRunBuilder {
	b.obj.Spec.Params = params
	return b
}

func (b *hubRunBuilder) Timeout(d time.Duration) *hubRunBuilder {
	b.obj.Spec.Timeout = v1beta1.NewDuration(d)
	return b
}

// TimeoutText sets spec.timeout as a client would write it, e.g. 10m.
func (b *hubRunBuilder) TimeoutText(text string) *hubRunBuilder {
	b.obj.Spec.Timeout = durationText(text)
	return b
}

func (b *hubRunBuilder) Cancelled() *hubRunBuilder {
	b.obj.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
	return b
}

func (b *hubRunBuilder) Conditions(c ...metav1.Condition) *hubRunBuilder {
	b.obj.Status.Conditions = c
	return b
}

func (b *hubRunBuilder) PodName(name string) *hubRunBuilder {
	b.obj.Status.PodName = name
	return b
}

func (b *hubRunBuilder) Started(t metav1.Time) *hubRunBuilder {
	b.obj.Status.StartTime = &t
	return b
}

func (b *hubRunBuilder) Completed(t metav1.Time) *hubRunBuilder {
	b.obj.Status.CompletionTime = &t
	return b
}

func (b *hubRunBuilder) StepStates(s ...v1beta1.StepState) *hubRunBuilder {
	b.obj.Status.Steps = s
	return b
}

func (b *hubRunBuilder) Annotations(a map[string]string) *hubRunBuilder {
	b.obj.Annotations = a
	return b
}

func (b *hubRunBuilder) Annotation(key, value string) *hubRunBuilder {
	setAnnotation(&b.obj.ObjectMeta, key, value)
	return b
}

func (b *hubRunBuilder) Obj() *v1beta1.TaskRun {
	return &b.obj
}

// spokeRunBuilder builds a v1alpha1 TaskRun of Task "build" that has no status.
type spokeRunBuilder struct{ obj v1alpha1.TaskRun }

func spokeRun() *spokeRunBuilder {
	return &spokeRunBuilder{obj: v1alpha1.TaskRun{
		ObjectMeta: testMeta(),
		Spec:       v1alpha1.TaskRunSpec{TaskRef: "build"},
	}}
}

func (b *spokeRunBuilder) TaskRef(name string) *spokeRunBuilder {
	b.obj.Spec.TaskRef = name
	return b
}

func (b *spokeRunBuilder) Phase(p v1alpha1.TaskRunPhase) *spokeRunBuilder {
	b.obj.Status.Phase = p
	return b
}

func (b *spokeRunBuilder) PodName(name string) *spokeRunBuilder {
	b.obj.Status.PodName = name
	return b
}

func (b *spokeRunBuilder) Started(t metav1.Time) *spokeRunBuilder {
	b.obj.Status.StartTime = &t
	return b
}

func (b *spokeRunBuilder) Finished(t metav1.Time) *spokeRunBuilder {
	b.obj.Status.FinishTime = &t
	return b
}

func (b *spokeRunBuilder) Annotations(a map[string]string) *spokeRunBuilder {
	b.obj.Annotations = a
	return b
}

func (b *spokeRunBuilder) Annotation(key, value string) *spokeRunBuilder {
	setAnnotation(&b.obj.ObjectMeta, key, value)
	return b
}

// Stash sets the conversion annotation to the given lost fields' JSON.
func (b *spokeRunBuilder) Stash(lostJSON string) *spokeRunBuilder {
	return b.Annotation(AnnotationConversionData, stash(lostJSON))
}

func (b *spokeRunBuilder) Obj() *v1alpha1.TaskRun {
	return &b.obj
}

// durationText is a Duration decoded from text, as the API server's JSON
// gives it: it keeps the text.
func durationText(text string) *v1beta1.Duration {
	d := &v1beta1.Duration{}
	if err := json.Unmarshal([]byte(strconv.Quote(text)), d); err != nil {
		panic(fmt.Sprintf("duration %q: %v", text, err))
	}
	return d
}
