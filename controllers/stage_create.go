package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/rundecision"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is the stage that creates a run's Pod: the one write that cannot
// be taken back, and the one the API server's admission may refuse.

// createPod creates the run's Pod, unless the run has one, from the spec
// it runs: its pinned one, else its inline one, else its Task's, read now
// (runstate.TaskToRun).
func (r *TaskRunReconciler) createPod(ctx context.Context, s *runScope) error {
	if s.Pod != nil {
		return nil
	}
	if s.OtherPod != nil {
		s.Outcome = s.PodInTheWay()
		return nil
	}
	var task *v1.Task
	if runstate.NeedsTask(s.Run) {
		var err error
		if task, err = r.getTask(ctx, s.Run); err != nil {
			return err
		}
	}
	values, o := s.TaskFound(task)
	if o != nil {
		s.Outcome = o
		return nil
	}
	task = s.Task
	level, err := r.unrestricted.read(ctx, r.APIReader, s.Run.Namespace)
	if err != nil {
		// Building the Pod without knowing would make one that a restricted
		// namespace refuses for good: wait, within the run's timeout.
		s.Outcome = rundecision.PodRefused(s.PodName, rundecision.CauseNamespaceUnread, err)
		r.retryByDeadline(s)
		return fmt.Errorf("creating the Pod of TaskRun %s/%s: %w", s.Run.Namespace, s.Run.Name, err)
	}
	in := runpod.Inputs{
		Name:                      s.PodName,
		Params:                    values,
		ActiveDeadlineSeconds:     s.Deadline().ActiveDeadlineSeconds(s.Now),
		Restricted:                level.restricted,
		NodeLostTolerationSeconds: nodefault.TolerationSeconds(r.NodeLostTimeout),
	}
	pod, err := r.buildPod(ctx, s.Run, task, in)
	var tooLarge *runpod.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		s.Outcome = rundecision.PodTooLarge(tooLarge)
		return nil
	case err != nil:
		return fmt.Errorf("building the Pod of TaskRun %s/%s: %w", s.Run.Namespace, s.Run.Name, err)
	}
	if err := r.confirmUnchanged(ctx, s.Run); err != nil {
		return err
	}
	err = r.ownAndCreate(ctx, s.Run, pod)
	if pod.Spec.Resources != nil && rundecision.RefusedByContainerLimitRange(err) {
		in.NotChained = "the namespace's LimitRange refuses the zero requests of a chained Pod's containers: " + err.Error()
		if pod, err = r.buildPod(ctx, s.Run, task, in); err != nil {
			return fmt.Errorf("building the Pod of TaskRun %s/%s: %w", s.Run.Namespace, s.Run.Name, err)
		}
		err = r.ownAndCreate(ctx, s.Run, pod)
	}
	switch {
	case err == nil:
		log.FromContext(ctx).Info("created Pod", "pod", pod.Name, "task", task.Name, "taskSpec", runstate.SpecSource(s.Run), "steps", len(task.Spec.Steps))
		s.Pod, s.CreatedPod = pod, true
		return nil
	case apierrors.IsAlreadyExists(err):
		return r.trackExisting(ctx, s, pod, err)
	}
	var retry, rereadNamespace bool
	s.Outcome, retry, rereadNamespace = s.Refused(err, pod, level.remembered)
	if rereadNamespace {
		r.unrestricted.forget(s.Run.Namespace)
		log.FromContext(ctx).Info("Pod Security refused a Pod built for a namespace remembered as not restricted; reading the namespace again",
			"pod", pod.Name, "error", err.Error())
	}
	if !retry {
		return nil
	}
	r.retryByDeadline(s)
	return fmt.Errorf("creating Pod %s/%s: %w", pod.Namespace, pod.Name, err)
}

// buildPod builds the Pod of run from task and in, chained if the manager
// asks for it and the API server can keep what the chained Pod needs.
func (r *TaskRunReconciler) buildPod(ctx context.Context, run *v1.TaskRun, task *v1.Task, in runpod.Inputs) (*corev1.Pod, error) {
	in.Chained = r.PodShape == runstate.PodShapeChained
	if in.Chained && in.NotChained == "" && runpod.NeedsPodLevelResources(task) {
		var unknown string
		in.PodLevelResources, unknown = r.podLevel.keeps(ctx, r.Client, func() (*corev1.Pod, error) {
			probe := in
			probe.PodLevelResources = true
			return runpod.Build(run, task, probe)
		})
		in.NotChained = unknown
	}
	return runpod.Build(run, task, in)
}

// getTask reads the run's Task from the cache; nil if it does not exist, or
// the run names none (it gives its Task inline).
func (r *TaskRunReconciler) getTask(ctx context.Context, run *v1.TaskRun) (*v1.Task, error) {
	if run.Spec.TaskRef.Name == "" {
		return nil, nil
	}
	task := &v1.Task{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.TaskRef.Name}
	if err := r.Client.Get(ctx, key, task); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Task %s: %w", key, err)
	}
	return task, nil
}

// ownAndCreate makes run pod's controller and creates pod.
func (r *TaskRunReconciler) ownAndCreate(ctx context.Context, run *v1.TaskRun, pod *corev1.Pod) error {
	if err := controllerutil.SetControllerReference(run, pod, r.Scheme); err != nil {
		return fmt.Errorf("owning Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return r.Client.Create(ctx, pod)
}

// trackExisting follows the Pod that a creation found there already (err):
// created since findPod looked, or by a reconcile that crashed before
// recording it, or not the run's. It tracks that Pod, never a second one,
// and reads it from the API server from now on, for the cache does not hold
// it once it has ended (podReads).
func (r *TaskRunReconciler) trackExisting(ctx context.Context, s *runScope, pod *corev1.Pod, err error) error {
	r.podReads.mark(client.ObjectKeyFromObject(s.Run))
	if ferr := r.findPod(ctx, s); ferr != nil || (s.Pod == nil && s.OtherPod == nil) {
		return fmt.Errorf("creating Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if s.OtherPod != nil {
		s.Outcome = s.PodInTheWay()
		return nil
	}
	if phase := s.Pod.Status.Phase; phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		// How it ended is endOrRetry's to judge, which ran before this
		// stage found the Pod: the next reconcile does, reading it.
		return fmt.Errorf("the Pod %s/%s of TaskRun %s/%s has already ended; reconciling the run again to record it",
			pod.Namespace, pod.Name, s.Run.Namespace, s.Run.Name)
	}
	return nil
}

// retryByDeadline makes the work queue's next retry of the run come no later
// than its deadline, when it times out.
func (r *TaskRunReconciler) retryByDeadline(s *runScope) {
	if at, ok := s.Deadline().Time(); ok && r.retries != nil {
		r.retries.retryBy(client.ObjectKeyFromObject(s.Run), at)
	}
}

// confirmUnchanged reads run from the API server before its Pod is created,
// the one step that cannot be taken back: the cache may not show yet that
// someone else finished the run (a v1alpha1 client setting phase Failed,
// say), and a finished run must never start. A run changed since the cache
// read it is reconciled again once the cache catches up, by the change's
// watch event: the error wraps errRunChanged, and Reconcile ends there.
func (r *TaskRunReconciler) confirmUnchanged(ctx context.Context, run *v1.TaskRun) error {
	current := &v1.TaskRun{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), current); err != nil {
		return fmt.Errorf("reading TaskRun %s/%s before creating its Pod: %w", run.Namespace, run.Name, err)
	}
	if current.ResourceVersion != run.ResourceVersion {
		return fmt.Errorf("TaskRun %s/%s (resourceVersion %s, now %s): %w",
			run.Namespace, run.Name, run.ResourceVersion, current.ResourceVersion, errRunChanged)
	}
	return nil
}

// errRunChanged says that a run changed since the cache read it, so its Pod
// is not created yet. It is no failure: any writer may change a run (a
// label, the storage migration's rewrite of every object when release 6
// first starts), and the change's watch event reconciles it again.
var errRunChanged = errors.New("changed since the cache read it; not creating its Pod yet")
