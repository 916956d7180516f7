package wrappers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
)

// V1alpha1TaskWrapper builds a v1alpha1 Task.
type V1alpha1TaskWrapper struct{ v1alpha1.Task }

// V1alpha1Task starts a v1alpha1 Task with no steps.
func V1alpha1Task(namespace, name string) *V1alpha1TaskWrapper {
	return &V1alpha1TaskWrapper{v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

// Meta replaces the Task's metadata, name and namespace included.
func (w *V1alpha1TaskWrapper) Meta(m metav1.ObjectMeta) *V1alpha1TaskWrapper {
	w.ObjectMeta = m
	return w
}

// Annotation sets one annotation.
func (w *V1alpha1TaskWrapper) Annotation(key, value string) *V1alpha1TaskWrapper {
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, key, value)
	return w
}

// Annotations replaces the annotations.
func (w *V1alpha1TaskWrapper) Annotations(a map[string]string) *V1alpha1TaskWrapper {
	w.ObjectMeta.Annotations = a
	return w
}

// Step appends a step.
func (w *V1alpha1TaskWrapper) Step(name, image, script string) *V1alpha1TaskWrapper {
	w.Spec.Steps = append(w.Spec.Steps, v1alpha1.Step{Name: name, Image: image, Script: script})
	return w
}

// Steps replaces the steps.
func (w *V1alpha1TaskWrapper) Steps(steps ...v1alpha1.Step) *V1alpha1TaskWrapper {
	w.Spec.Steps = steps
	return w
}

// Obj returns the Task.
func (w *V1alpha1TaskWrapper) Obj() *v1alpha1.Task { return &w.Task }

// V1alpha1TaskRunWrapper builds a v1alpha1 TaskRun.
type V1alpha1TaskRunWrapper struct{ v1alpha1.TaskRun }

// V1alpha1TaskRun starts a v1alpha1 run of task with no status.
func V1alpha1TaskRun(namespace, name, task string) *V1alpha1TaskRunWrapper {
	return &V1alpha1TaskRunWrapper{v1alpha1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1alpha1.TaskRunSpec{TaskRef: task},
	}}
}

// Meta replaces the run's metadata, name and namespace included.
func (w *V1alpha1TaskRunWrapper) Meta(m metav1.ObjectMeta) *V1alpha1TaskRunWrapper {
	w.ObjectMeta = m
	return w
}

// Annotation sets one annotation.
func (w *V1alpha1TaskRunWrapper) Annotation(key, value string) *V1alpha1TaskRunWrapper {
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, key, value)
	return w
}

// Annotations replaces the annotations.
func (w *V1alpha1TaskRunWrapper) Annotations(a map[string]string) *V1alpha1TaskRunWrapper {
	w.ObjectMeta.Annotations = a
	return w
}

// TaskRef sets the name of the Task to run.
func (w *V1alpha1TaskRunWrapper) TaskRef(name string) *V1alpha1TaskRunWrapper {
	w.Spec.TaskRef = name
	return w
}

// Phase sets status.phase.
func (w *V1alpha1TaskRunWrapper) Phase(p v1alpha1.TaskRunPhase) *V1alpha1TaskRunWrapper {
	w.Status.Phase = p
	return w
}

// PodName sets status.podName.
func (w *V1alpha1TaskRunWrapper) PodName(name string) *V1alpha1TaskRunWrapper {
	w.Status.PodName = name
	return w
}

// Started sets status.startTime.
func (w *V1alpha1TaskRunWrapper) Started(t metav1.Time) *V1alpha1TaskRunWrapper {
	w.Status.StartTime = &t
	return w
}

// Finished sets status.finishTime.
func (w *V1alpha1TaskRunWrapper) Finished(t metav1.Time) *V1alpha1TaskRunWrapper {
	w.Status.FinishTime = &t
	return w
}

// Obj returns the TaskRun.
func (w *V1alpha1TaskRunWrapper) Obj() *v1alpha1.TaskRun { return &w.TaskRun }
