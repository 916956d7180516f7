// Package controllers runs TaskRuns: each one as one Pod whose steps run in
// order. It reads and writes only v1, the storage version; the API server
// converts for v1beta1 and v1alpha1 clients. It reads the cluster, asks
// internal/rundecision what happens next, and writes that: the Pod and the
// run's status. docs/lifecycle.md describes the behaviour it implements.
package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// RBAC: exactly what the reconciler and its watches use. Pod patch lowers
// activeDeadlineSeconds and adopts a Pod of an earlier release; taskruns/
// finalizers lets it set blockOwnerDeletion on its Pods where the
// OwnerReferencesPermissionEnforcement admission plugin is on; taskruns
// delete removes a finished run whose time to live has passed.
//
// +kubebuilder:rbac:groups=minitask.dev,resources=taskruns,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=minitask.dev,resources=taskruns/status,verbs=patch
// +kubebuilder:rbac:groups=minitask.dev,resources=taskruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=minitask.dev,resources=tasks,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with mgr: it watches TaskRuns,
// their Pods, Tasks (to start the runs that wait for them), and Nodes (to
// judge the runs whose Pods are on a node that fails: pod_node.go).
func (r *TaskRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Scheme == nil {
		r.Scheme = mgr.GetScheme()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("minitask-controller")
	}
	r.retries = newRetryLimiter(r.clock)
	r.unrestricted = newUnrestrictedNamespaces(r.clock)
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = DefaultMaxConcurrentReconciles
	}
	if err := indexTaskRef(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := indexPodNode(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// Only a Task's appearance can unblock a run; later changes to it never
	// reach a Pod that already exists.
	taskCreated := predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("taskrun").
		For(&v1.TaskRun{}).
		Owns(&corev1.Pod{}).
		Watches(&v1.Task{},
			handler.EnqueueRequestsFromMapFunc(runsWaitingFor(mgr.GetClient())),
			builder.WithPredicates(taskCreated)).
		Watches(&corev1.Node{},
			handler.EnqueueRequestsFromMapFunc(runsOnNode(mgr.GetClient())),
			builder.WithPredicates(nodeHealthChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: r.retries}).
		Complete(r)
}

// Reconcile moves one TaskRun along its lifecycle: it finds or creates the
// Pod of the run's current attempt, moves on to a new attempt when one failed
// for a reason the run retries, stops the Pod when the run is cancelled, times
// out, or is held back by the kubelet too long (an image it cannot pull, a
// configuration it cannot meet), and reports the Pod's progress in the run's
// status, which it writes once, at the end. It deletes a finished run whose
// time to live has passed. Each decision is internal/rundecision's.
func (r *TaskRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &v1.TaskRun{}
	if err := r.Client.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// A finished run is final whatever happens to its Pod, and a run being
	// deleted is going away: neither is ever written again. A finished run
	// is only deleted, once its time to live has passed, and the Pod of one
	// that ended while its Pod went on (ImagePullFailed, a step that cannot
	// start) stopped.
	if !run.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if runstate.Finished(run) {
		r.forget(req.NamespacedName)
		if err := r.stopPodAfterEnd(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		return r.deleteIfExpired(ctx, run)
	}
	if r.writes.isStale(run) {
		log.FromContext(ctx).V(1).Info("cache has not caught up with the last status write; its event will reconcile the run")
		return ctrl.Result{}, nil
	}

	s := r.newRunScope(run)
	err := r.advance(ctx, s)
	if errors.Is(err, errRunChanged) {
		log.FromContext(ctx).V(1).Info("TaskRun changed since the cache read it; its event will reconcile the run", "error", err.Error())
		return ctrl.Result{}, nil
	}
	if !s.Decided() {
		// An error stopped the stages before they decided anything.
		return ctrl.Result{}, err
	}
	s.Settle()
	if s.StartedFirstPod(s.original) {
		// The Pod's own watch event reconciles the run at once and records
		// its start then (startTime is the Pod's creation): under load, when
		// the work queue reaches the run again after its Pod has moved on,
		// one status write says what two would have. That later reconcile
		// reads the Pod from the API server should the cache, which holds no
		// ended Pod, lack it.
		r.podReads.mark(req.NamespacedName)
		return ctrl.Result{RequeueAfter: s.RequeueAfter()}, err
	}
	s.ApplyStatus()
	if patchErr := r.patchStatus(ctx, s); patchErr != nil {
		return ctrl.Result{}, errors.Join(err, patchErr)
	}
	r.observeTransition(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.RequeueAfter()}, nil
}

// advance takes the stages of a reconcile in order, until one decides the
// run's outcome. Each reads what its decision needs, asks it, and writes
// what it decided to the Pod; the status is Reconcile's to write. ("Phase"
// is v1alpha1's word for a run's status, never a stage.)
func (r *TaskRunReconciler) advance(ctx context.Context, s *runScope) error {
	if err := r.findPod(ctx, s); err != nil {
		return err
	}
	if err := r.pinPodTask(ctx, s); err != nil {
		return err
	}
	if err := r.endOrRetry(ctx, s); err != nil || s.Decided() {
		return err
	}
	if err := r.stopIfRequested(ctx, s); err != nil || s.Decided() {
		return err
	}
	if err := r.failIfHeld(ctx, s); err != nil || s.Decided() {
		return err
	}
	if err := r.createPod(ctx, s); err != nil || s.Decided() {
		return err
	}
	if s.Pod == nil {
		return fmt.Errorf("no Pod to track for TaskRun %s/%s", s.Run.Namespace, s.Run.Name)
	}
	s.Outcome = s.Progress()
	return nil
}
