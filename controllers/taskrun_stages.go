package controllers

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

// This file holds the runScope that the stages of a reconcile share, and the
// stages that find, stop and track a run's Pod (taskrun_create.go holds the
// one that creates it). runStages runs them in order.

// runScope carries what the stages of one reconcile share.
type runScope struct {
	// run is the TaskRun whose status the stages rewrite in place.
	run *v1.TaskRun
	// original is the run as read: the base of the status patch.
	original *v1.TaskRun
	// now is the one reading of the clock that the whole reconcile uses.
	now time.Time
	// timeout is the run's timeout; 0 means none.
	timeout time.Duration

	// podName is the name of the Pod of the run's current attempt, and
	// claimed says that status.podName already names it: a run whose
	// claimed Pod is missing lost it, while one whose Pod is not claimed yet
	// still has to get it.
	podName string
	claimed bool
	// pod is the Pod of the run's current attempt, once found or created.
	pod *corev1.Pod
	// steps are runpod.StepStates(stepsOf) as stepsOf stood at stepsVersion: the
	// stages and the status read the steps of the same Pod (podSteps).
	steps        []v1.StepState
	stepsOf      *corev1.Pod
	stepsVersion string
	// otherPod holds the run's Pod name but is controlled by something else.
	otherPod *corev1.Pod
	// createdPod says that this reconcile created pod.
	createdPod bool
	// outcome is the Succeeded condition, once a stage has decided it.
	outcome *outcome
	// written says that the status patch landed.
	written bool
	// recheckIn, when not 0, is how soon the run must be looked at again
	// for a reason other than its deadline (an image pull's timeout).
	recheckIn time.Duration
	// mountHeld is the volume the kubelet cannot mount for the Pod, which
	// the Pending message names, if failIfHeld found one.
	mountHeld *runpod.Hold
	// node is what the Pod's node makes of the Pod, if its node has a say
	// (readNode): lost with it, or not ready.
	node *nodefault.Verdict
	// waitsForFence says that the run's attempt is lost with a node that is
	// not fenced, and the next one waits (waitForFence).
	waitsForFence bool
}

func (r *TaskRunReconciler) newRunScope(run *v1.TaskRun) *runScope {
	return &runScope{run: run, original: run.DeepCopy(), now: r.clock(), timeout: runstate.Timeout(run, r.DefaultTimeout)}
}

// startTime is when the run started: as recorded; else, when a crash kept an
// earlier reconcile from recording it after creating the Pod, when the Pod
// was created; else now. Times are kept in whole seconds, as the API stores them.
func (s *runScope) startTime() time.Time {
	switch {
	case s.run.Status.StartTime != nil:
		return s.run.Status.StartTime.Time
	case s.pod != nil && !s.createdPod && s.pod.CreationTimestamp.Time.Before(s.now):
		return s.pod.CreationTimestamp.Time
	default:
		return s.now.Truncate(time.Second)
	}
}

// deadline is when the run times out.
func (s *runScope) deadline() runstate.Deadline {
	return runstate.DeadlineFor(s.startTime(), s.timeout)
}

// timedOut reports whether the run's deadline has passed.
func (s *runScope) timedOut() bool {
	return s.deadline().Passed(s.now)
}

// untilDeadline is how long the run has left, for a run that goes on and has
// a timeout, so that it is reconciled again at its deadline; else 0.
func (s *runScope) untilDeadline() time.Duration {
	if s.outcome.finished() {
		return 0
	}
	return s.deadline().RecheckIn(s.now)
}

// requeueAfter is when a run that goes on is reconciled again though nothing
// about it changes: at its deadline, or sooner at a recheck a stage asked
// for; 0 for neither.
func (s *runScope) requeueAfter() time.Duration {
	after := s.untilDeadline()
	if s.outcome.finished() || s.recheckIn <= 0 {
		return after
	}
	if after == 0 {
		return s.recheckIn
	}
	return min(after, s.recheckIn)
}

// recheckWithin asks that the run be reconciled again within d at the latest.
func (s *runScope) recheckWithin(d time.Duration) {
	if s.recheckIn <= 0 || d < s.recheckIn {
		s.recheckIn = d
	}
}

// podSteps returns runpod.StepStates(s.pod), nil without a Pod, reading the Pod's
// container statuses and termination messages once for each version of it
// the reconcile holds: a stage reads them, and the status reports them.
func (s *runScope) podSteps() []v1.StepState {
	if s.pod == nil {
		return nil
	}
	if s.stepsOf != s.pod || s.stepsVersion != s.pod.ResourceVersion {
		s.steps, s.stepsOf, s.stepsVersion = runpod.StepStates(s.pod), s.pod, s.pod.ResourceVersion
	}
	return s.steps
}

// startedFirstPod reports whether this reconcile created the first Pod of a
// run whose start is not recorded yet: a start that nothing else in the
// reconcile changed, which the next reconcile can record as well. (A Pod is
// created only when status.podName names none: a named Pod that is missing
// ends the run instead.)
func (s *runScope) startedFirstPod() bool {
	st := s.original.Status
	return s.createdPod && st.StartTime == nil && len(st.Attempts) == 0 && !s.outcome.finished()
}

func (s *runScope) statusChanged() bool {
	return !equality.Semantic.DeepEqual(s.original.Status, s.run.Status)
}

// findPod finds the Pod of the run's current attempt (currentPodName), if
// its status claims it or the run controls it. The Pods of earlier attempts
// are never looked at: they have ended, and are kept only for their logs.
//
// A run that never started reads it from the cache alone (unless podReads
// marks it): it has no Pod but one a reconcile created and crashed before
// recording, which the cache holds unless it has ended, and which createPod's
// create then finds. That saves each new run a GET from the API server.
func (r *TaskRunReconciler) findPod(ctx context.Context, s *runScope) error {
	name, claimed := currentPodName(s.run)
	s.podName, s.claimed, s.pod, s.otherPod, s.node = name, claimed, nil, nil, nil
	live := claimed || s.run.Status.StartTime != nil || r.podReads.marked(client.ObjectKeyFromObject(s.run))
	pod, err := r.getPod(ctx, s.run.Namespace, name, live)
	if err != nil || pod == nil {
		return err
	}
	if !claimed && !metav1.IsControlledBy(pod, s.run) {
		s.otherPod = pod
		return nil
	}
	if !runstate.IsManaged(pod) {
		if err := r.adoptPod(ctx, s.run, pod); err != nil {
			return err
		}
	}
	s.pod = pod
	return r.readNode(ctx, s)
}

// getPod reads a Pod from the cache, else, if live, from the API server: the
// cache holds only Pods with minitask's label that have not ended, and may
// not yet hold one created a moment ago. It returns nil if there is no such
// Pod.
func (r *TaskRunReconciler) getPod(ctx context.Context, namespace, name string, live bool) (*corev1.Pod, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) && live {
		err = r.APIReader.Get(ctx, key, pod)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting Pod %s: %w", key, err)
	}
	return pod, nil
}

// adoptPod gives minitask's labels to a Pod that run owns or names but that
// lacks them (one started by an earlier release, say), and makes run its
// controller if it has none, so that the cache and the Pod watch see it.
func (r *TaskRunReconciler) adoptPod(ctx context.Context, run *v1.TaskRun, pod *corev1.Pod) error {
	base := pod.DeepCopy()
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	maps.Copy(pod.Labels, runstate.PodLabels(run))
	if metav1.GetControllerOf(pod) == nil {
		if err := controllerutil.SetControllerReference(run, pod, r.Scheme); err != nil {
			return fmt.Errorf("adopting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	if err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adopting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	log.FromContext(ctx).Info("adopted Pod", "pod", pod.Name)
	return nil
}

// currentPodName returns the name of the Pod of run's current attempt, the
// attempt after len(status.attempts) failed ones, and whether status.podName
// already names it. The first attempt's Pod is the one status.podName names
// (one that an earlier release started, say), else runstate.PodName; a
// later one's name is derived from the attempt's number alone, so that a
// reconcile that crashed after creating it is followed by one that finds it.
func currentPodName(run *v1.TaskRun) (string, bool) {
	attempt := len(run.Status.Attempts)
	if attempt == 0 && run.Status.PodName != "" {
		return run.Status.PodName, true
	}
	name := runstate.AttemptPodName(run, attempt)
	return name, run.Status.PodName == name
}

// finishIfPodEnded ends the current attempt when its Pod has ended, is
// gone after the run claimed it, or is lost with its node (lostWithNode).
func finishIfPodEnded(_ context.Context, s *runScope) error {
	var o *outcome
	switch {
	case s.node.Lost():
		s.outcome = s.lostWithNode()
		return nil
	case s.pod != nil:
		o = fromPod(runpod.Outcome(s.pod, s.podSteps()))
	case s.claimed:
		o = podDeleted(s.podName)
	}
	if o != nil && runpod.StoppedEarly(s.pod) {
		// stopPod ends the Pod of a cancelled or timed-out run, by deleting
		// it or lowering its deadline, before the run's status says why; a
		// reconcile that could not write that status (a conflict, a crash)
		// leaves the next one the stopped Pod. The run's own cancellation or
		// deadline says why it stopped, whoever stopped it; only a Pod
		// stopped for no reason the run has is a Pod failure.
		switch {
		case runstate.CancelRequested(s.run):
			o = cancelled(s.run)
		case s.pod == nil || s.pod.Status.Phase != corev1.PodFailed:
			// Deleted: only a deadline that has passed stopped it.
			if s.timedOut() {
				o = timedOut(s.run, s.timeout)
			}
		case s.deadline().StoppedPod(s.now):
			// The kubelet's count of the deadline may end a few seconds
			// before the controller's.
			o = timedOut(s.run, s.timeout)
		}
	}
	s.outcome = o
	return nil
}

// stopIfRequested ends a run that is cancelled or has timed out, and stops its Pod.
func (r *TaskRunReconciler) stopIfRequested(ctx context.Context, s *runScope) error {
	var o *outcome
	switch {
	case runstate.CancelRequested(s.run):
		o = s.mayStillRun(cancelled(s.run))
	case s.timedOut():
		o = s.mayStillRun(timedOut(s.run, s.timeout))
	default:
		return nil
	}
	if s.pod != nil {
		if err := r.stopPod(ctx, s.pod, s.now); err != nil {
			return err
		}
	}
	s.outcome = o
	return nil
}

// stopPod stops the Pod of a run that ended early. A Pod that started a step
// is stopped by lowering its activeDeadlineSeconds: the kubelet kills it and
// its logs stay readable. A Pod that never started has no logs, and is deleted.
func (r *TaskRunReconciler) stopPod(ctx context.Context, pod *corev1.Pod, now time.Time) error {
	logger := log.FromContext(ctx).WithValues("pod", pod.Name)
	if runpod.NeverStarted(pod) {
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		logger.Info("deleted Pod that never started")
		return nil
	}
	deadline := runstate.StoppingDeadlineSeconds(pod.Status.StartTime.Time, now)
	if current := pod.Spec.ActiveDeadlineSeconds; current != nil && *current <= deadline {
		return nil
	}
	base := pod.DeepCopy()
	pod.Spec.ActiveDeadlineSeconds = &deadline
	if err := r.Client.Patch(ctx, pod, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("stopping Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	logger.Info("lowered activeDeadlineSeconds to stop Pod", "activeDeadlineSeconds", deadline)
	return nil
}

// trackProgress reports a Pod that is still going: Pending or Running.
func trackProgress(_ context.Context, s *runScope) error {
	if s.pod == nil {
		return fmt.Errorf("no Pod to track for TaskRun %s/%s", s.run.Namespace, s.run.Name)
	}
	s.outcome = s.nodeNotReady(fromPod(runpod.Progress(s.pod, s.podSteps(), s.mountHeld)))
	return nil
}
