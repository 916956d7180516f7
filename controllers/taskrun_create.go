package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is the stage that creates a run's Pod: the one write that cannot
// be taken back, and the one the API server's admission may refuse.

// createPod creates the run's Pod from its Task, unless the run has one.
func (r *TaskRunReconciler) createPod(ctx context.Context, s *runScope) error {
	if s.pod != nil {
		return nil
	}
	if s.otherPod != nil {
		s.podInTheWay(s.otherPod)
		return nil
	}
	task := &v1.Task{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.run.Namespace, Name: s.run.Spec.TaskRef.Name}, task); err != nil {
		if apierrors.IsNotFound(err) {
			s.outcome = waitingForTask(s.run)
			return nil
		}
		return fmt.Errorf("getting Task %s/%s: %w", s.run.Namespace, s.run.Spec.TaskRef.Name, err)
	}
	values, problems := runstate.ParamValues(task, s.run)
	if problems.Any() {
		s.outcome = invalidParams(problems)
		return nil
	}
	deadline := s.deadline()
	level, err := r.readNamespaceLevel(ctx, s.run.Namespace)
	if err != nil {
		// Building the Pod without knowing would make one that a restricted
		// namespace refuses for good: wait, within the run's timeout.
		s.outcome = podRefused(s.podName, causeNamespaceUnread, err)
		r.retryByDeadline(s.run, deadline)
		return fmt.Errorf("creating the Pod of TaskRun %s/%s: %w", s.run.Namespace, s.run.Name, err)
	}
	in := runpod.Inputs{
		Name:                      s.podName,
		Params:                    values,
		ActiveDeadlineSeconds:     deadline.ActiveDeadlineSeconds(s.now),
		Restricted:                level.restricted,
		NodeLostTolerationSeconds: nodefault.TolerationSeconds(r.NodeLostTimeout),
	}
	pod, err := r.buildPod(ctx, s.run, task, in)
	var tooLarge *runpod.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		s.outcome = podTooLarge(tooLarge)
		return nil
	case err != nil:
		return fmt.Errorf("building the Pod of TaskRun %s/%s: %w", s.run.Namespace, s.run.Name, err)
	}
	if err := r.confirmUnchanged(ctx, s.run); err != nil {
		return err
	}
	if err := controllerutil.SetControllerReference(s.run, pod, r.Scheme); err != nil {
		return fmt.Errorf("owning Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	err = r.Client.Create(ctx, pod)
	if pod.Spec.Resources != nil && refusedByContainerLimitRange(err) {
		// A chained Pod's containers request nothing of what the Pod
		// requests once; a LimitRange with a minimum, or a largest ratio of
		// limit to request, per container refuses that. Init containers
		// keep the steps' own requests.
		in.NotChained = "the namespace's LimitRange refuses the zero requests of a chained Pod's containers: " + err.Error()
		if pod, err = r.buildPod(ctx, s.run, task, in); err != nil {
			return fmt.Errorf("building the Pod of TaskRun %s/%s: %w", s.run.Namespace, s.run.Name, err)
		}
		if err := controllerutil.SetControllerReference(s.run, pod, r.Scheme); err != nil {
			return fmt.Errorf("owning Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		err = r.Client.Create(ctx, pod)
	}
	switch {
	case err == nil:
		log.FromContext(ctx).Info("created Pod", "pod", pod.Name, "task", task.Name, "steps", len(task.Spec.Steps))
		s.pod, s.createdPod = pod, true
		return nil
	case apierrors.IsAlreadyExists(err):
		// Created since findPod looked, or by a reconcile that crashed before
		// recording it, or not the run's: track that Pod, never a second
		// one, and read it from the API server from now on, for the cache
		// does not hold it once it has ended (podReads).
		r.podReads.mark(client.ObjectKeyFromObject(s.run))
		if ferr := r.findPod(ctx, s); ferr != nil || (s.pod == nil && s.otherPod == nil) {
			return fmt.Errorf("creating Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if s.otherPod != nil {
			s.podInTheWay(s.otherPod)
			return nil
		}
		if phase := s.pod.Status.Phase; phase == corev1.PodSucceeded || phase == corev1.PodFailed {
			// How it ended is endOrRetry's to judge, which ran before this
			// stage found the Pod: the next reconcile does, reading it.
			return fmt.Errorf("the Pod %s/%s of TaskRun %s/%s has already ended; reconciling the run again to record it",
				pod.Namespace, pod.Name, s.run.Namespace, s.run.Name)
		}
		return nil
	}
	refused := classifyRefusal(err)
	if level.remembered && refusedByPodSecurity(err) {
		// Built for a namespace remembered as not restricted, which may
		// enforce the level since: read it again before judging the Pod.
		r.unrestricted.forget(s.run.Namespace)
		log.FromContext(ctx).Info("Pod Security refused a Pod built for a namespace remembered as not restricted; reading the namespace again",
			"pod", pod.Name, "error", err.Error())
		refused = refusal{cause: causeNamespaceRelabelled}
	}
	if refused.permanent {
		// The API server will refuse this Pod every time: retrying would only
		// storm it. Its message says why, e.g. an image that a param made
		// invalid, or the namespace's Pod Security level.
		s.outcome = podRejected(err)
		return nil
	}
	// The error retries the run with the work queue's backoff, but never
	// later than its deadline, when it times out.
	s.outcome = podRefused(pod.Name, refused.cause, err)
	r.retryByDeadline(s.run, deadline)
	return fmt.Errorf("creating Pod %s/%s (%s): %w", pod.Namespace, pod.Name, refused.cause, err)
}

// retryByDeadline makes the work queue's next retry of run come no later than
// its deadline, when it times out.
func (r *TaskRunReconciler) retryByDeadline(run *v1.TaskRun, deadline runstate.Deadline) {
	if at, ok := deadline.Time(); ok && r.retries != nil {
		r.retries.retryBy(client.ObjectKeyFromObject(run), at)
	}
}

// A run waiting for the Pod of an earlier run of the same name to go looks
// again earlierPodRecheckMin after it was created, then less often the longer
// it has waited, up to earlierPodRecheckMax apart. No event would tell it:
// the cache holds no Pod that has ended, so the garbage collector's deletion
// of one is never seen. A Pod is usually gone within seconds of its run; a
// garbage collector that is down must not cost a read a second for each run
// that waits.
const (
	earlierPodRecheckMin = time.Second
	earlierPodRecheckMax = 30 * time.Second
)

// podInTheWay decides the outcome of a run whose Pod name is taken by pod, a
// Pod it does not control. An earlier TaskRun of the same name, deleted since,
// leaves its Pod to the garbage collector for a while: the run waits for it
// to go instead of failing a reused name. Any other Pod fails the run.
func (s *runScope) podInTheWay(pod *corev1.Pod) {
	if !ofEarlierRun(s.run, pod) {
		s.outcome = podNotOurs(pod.Name)
		return
	}
	s.outcome = unknown(v1.ReasonPending, "waiting for Pod %q of an earlier TaskRun named %q to be deleted", pod.Name, s.run.Name)
	waited := s.now.Sub(s.run.CreationTimestamp.Time)
	s.recheckWithin(min(max(waited/2, earlierPodRecheckMin), earlierPodRecheckMax))
}

// ofEarlierRun reports whether pod, which run does not control, is controlled
// by a TaskRun of run's name: an earlier one, deleted since, for no two
// TaskRuns of a namespace share a name at once.
func ofEarlierRun(run *v1.TaskRun, pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "TaskRun" && owner.Name == run.Name &&
		strings.HasPrefix(owner.APIVersion, v1.GroupVersion.Group+"/")
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
