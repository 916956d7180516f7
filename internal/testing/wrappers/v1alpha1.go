package wrappers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
)

// V1alpha1TaskWrapper builds a v1alpha1 Task.
type V1alpha1TaskWrapper struct {
	v1alpha1.Task
	metadata[*V1alpha1TaskWrapper]
}

// V1alpha1Task starts a v1alpha1 Task with no steps.
func V1alpha1Task(namespace, name string) *V1alpha1TaskWrapper {
	w := &V1alpha1TaskWrapper{Task: v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
	w.metadata = metadata[*V1alpha1TaskWrapper]{w, &w.ObjectMeta}
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
type V1alpha1TaskRunWrapper struct {
	v1alpha1.TaskRun
	metadata[*V1alpha1TaskRunWrapper]
}

// V1alpha1TaskRun starts a v1alpha1 run of task with no status.
func V1alpha1TaskRun(namespace, name, task string) *V1alpha1TaskRunWrapper {
	w := &V1alpha1TaskRunWrapper{TaskRun: v1alpha1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1alpha1.TaskRunSpec{TaskRef: task},
	}}
	w.metadata = metadata[*V1alpha1TaskRunWrapper]{w, &w.ObjectMeta}
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
