package validation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// taskWrapper builds a v1beta1 Task fluently, so each test case reads as what
// it adds to an empty Task.
type taskWrapper struct{ v1beta1.Task }

func newTask(name string) *taskWrapper {
	return &taskWrapper{v1beta1.Task{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "Task"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
	}}
}

// param declares a param a run must give.
func (w *taskWrapper) param(name string) *taskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1beta1.ParamSpec{Name: name})
	return w
}

// paramDefault declares a param with a default.
func (w *taskWrapper) paramDefault(name, def string) *taskWrapper {
	w.Spec.Params = append(w.Spec.Params, v1beta1.ParamSpec{Name: name, Default: &def})
	return w
}

func (w *taskWrapper) step(name, image, script string) *taskWrapper {
	w.Spec.Steps = append(w.Spec.Steps, v1beta1.Step{Name: name, Image: image, Script: script})
	return w
}

func (w *taskWrapper) obj() *v1beta1.Task { return w.DeepCopy() }
