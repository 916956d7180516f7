package runindex

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// Slim keeps of a run only what the runs list shows and filters on: its
// name, labels and times, its Task, its retries and cancel request, its
// Succeeded condition and how many attempts it made. The rest (managedFields,
// annotations, params, workspaces, Pod template, steps, results, attempts'
// messages) can be many kilobytes a run, held 10,000 times for nothing: a
// run's page reads the whole run from the API server. It is the index's
// transform, run on each object before it is stored.
func Slim(obj any) (any, error) {
	run, ok := obj.(*v1.TaskRun)
	if !ok {
		// A tombstone (cache.DeletedFinalStateUnknown) holds a run already slim.
		return obj, nil
	}
	slim := &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:              run.Name,
			Namespace:         run.Namespace,
			UID:               run.UID,
			ResourceVersion:   run.ResourceVersion,
			CreationTimestamp: run.CreationTimestamp,
			DeletionTimestamp: run.DeletionTimestamp,
			Labels:            run.Labels,
		},
		Spec: v1.TaskRunSpec{
			TaskRef: run.Spec.TaskRef,
			Retries: run.Spec.Retries,
			Status:  run.Spec.Status,
		},
		Status: v1.TaskRunStatus{
			StartTime:      run.Status.StartTime,
			CompletionTime: run.Status.CompletionTime,
		},
	}
	if c := runstate.Succeeded(run); c != nil {
		slim.Status.Conditions = []metav1.Condition{*c}
	}
	if n := len(run.Status.Attempts); n > 0 {
		// Only their number is shown: the attempt a run is on.
		slim.Status.Attempts = make([]v1.Attempt, n)
	}
	return slim, nil
}
