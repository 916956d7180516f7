package conversion

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// SpokeAnnotationsSize is how many bytes the annotations of obj's v1alpha1
// form (obj a v1 or v1beta1 Task or TaskRun) take with the whole stash, as the API server counts them against
// MaxAnnotationsBytes: what conversion writes when it fits. The validating
// webhook refuses a write that would take it over the limit, so that no
// object it admits has to be read through v1alpha1 without its stash.
//
// A run that gives a taskSpec is measured as it will be once its first
// attempt pins that spec in status.taskSpec (release 7): the stash then
// holds it twice, and admitting the run must leave room for both.
func SpokeAnnotationsSize(obj runtime.Object) (int, error) {
	var (
		meta *metav1.ObjectMeta
		data string
		err  error
	)
	switch obj := obj.(type) {
	case *v1.Task:
		meta = &obj.ObjectMeta
		data, err = encodeStash(taskFromHub(obj, &v1alpha1.Task{}))
	case *v1.TaskRun:
		meta = &obj.ObjectMeta
		data, err = encodeStash(taskRunFromHub(pinned(obj), &v1alpha1.TaskRun{}))
	case *v1beta1.Task:
		hub := &v1.Task{}
		if err := ConvertBetaTaskToHub(context.Background(), obj, hub); err != nil {
			return 0, err
		}
		meta = &obj.ObjectMeta
		data, err = encodeStash(taskFromHub(hub, &v1alpha1.Task{}))
	case *v1beta1.TaskRun:
		hub := &v1.TaskRun{}
		if err := ConvertBetaTaskRunToHub(context.Background(), obj, hub); err != nil {
			return 0, err
		}
		meta = &obj.ObjectMeta
		data, err = encodeStash(taskRunFromHub(pinned(hub), &v1alpha1.TaskRun{}))
	default:
		return 0, fmt.Errorf("measuring the v1alpha1 annotations of a %T: not a v1 or v1beta1 Task or TaskRun", obj)
	}
	if err != nil {
		return 0, fmt.Errorf("encoding the conversion annotation of %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	if data == "" {
		return annotationsSizeWith(meta.Annotations, "", ""), nil
	}
	return annotationsSizeWith(meta.Annotations, AnnotationConversionData, data), nil
}

// pinned is run as it will be once its first attempt pins its spec: its
// inline taskSpec also in status.taskSpec. A run that names its Task, or
// whose spec is pinned already, is itself.
func pinned(run *v1.TaskRun) *v1.TaskRun {
	if run.Spec.TaskSpec == nil || run.Status.TaskSpec != nil {
		return run
	}
	copied := *run // shallow: only status.taskSpec differs, and nothing is changed
	copied.Status.TaskSpec = run.Spec.TaskSpec
	return &copied
}
