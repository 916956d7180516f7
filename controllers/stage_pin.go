package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is the stage that pins a run's spec from its Pod: the reconcile
// that created the run's first Pod left the status to the next one
// (rundecision.StartedFirstPod), and the Pod names the Task version it was
// built from.

// pinPodTask pins the spec of the Task the run's Pod was built from, if
// the run asks for it (rundecision.PodTaskToPin): the Task as the cache
// holds it, if it is still that version, as it nearly always is; else
// (edited, or deleted, since) that version, read from the API server at
// its resourceVersion. A version the API server no longer keeps (etcd
// compacts its history, every 5 minutes by default) leaves the run
// unpinned, as a run that release 6 started: it pins at its next Pod.
func (r *TaskRunReconciler) pinPodTask(ctx context.Context, s *runScope) error {
	version, ok := s.PodTaskToPin()
	if !ok {
		return nil
	}
	task, err := r.getTask(ctx, s.Run)
	if err != nil {
		return err
	}
	if !version.Of(task) {
		// Reading an old version is a bet: one the API server refuses,
		// or a forged annotation, must not hold the run up.
		if task, err = r.taskAt(ctx, s.Run, version); err != nil {
			log.FromContext(ctx).Info("cannot read the Task version the run's Pod was built from; the run pins its spec at its next Pod",
				"pod", s.Pod.Name, "task", s.Run.Spec.TaskRef.Name, "taskVersion", version.String(), "error", err.Error())
			return nil
		}
	}
	s.PinPodTask(task)
	return nil
}

// taskAt reads the run's Task as it stood at version's resourceVersion,
// from the API server (which asks etcd for it), and checks that it is that
// version.
func (r *TaskRunReconciler) taskAt(ctx context.Context, run *v1.TaskRun, version runstate.TaskVersion) (*v1.Task, error) {
	list := &v1.TaskList{}
	err := r.APIReader.List(ctx, list, &client.ListOptions{
		Namespace:     run.Namespace,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", run.Spec.TaskRef.Name),
		Raw:           &metav1.ListOptions{ResourceVersion: version.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
	})
	if err != nil {
		return nil, fmt.Errorf("listing Task %s/%s at resourceVersion %s: %w", run.Namespace, run.Spec.TaskRef.Name, version.ResourceVersion, err)
	}
	for i := range list.Items {
		if task := &list.Items[i]; version.Of(task) {
			return task, nil
		}
	}
	return nil, fmt.Errorf("task %s/%s at resourceVersion %s is not version %s", run.Namespace, run.Spec.TaskRef.Name, version.ResourceVersion, version)
}
