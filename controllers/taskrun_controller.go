// Package controllers runs TaskRuns: each one as one Pod whose steps run in
// order. It reads and writes only the v1beta1 API; the API server converts for
// v1alpha1 clients. docs/lifecycle.md describes the behaviour it implements.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
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

// DefaultMaxConcurrentReconciles is the default of --max-concurrent-reconciles.
//
// A reconcile is bound by API latency, not CPU: a few cache reads, then at
// most one Pod write and one status patch, each a round trip of tens of
// milliseconds (more when admission webhooks run on Pod creation). One worker
// would let a single slow Pod creation stall every other run; a handful keeps
// runs moving while the manager's two cores stay mostly idle. Beyond that,
// more workers only add load that the API server's priority and fairness
// would queue anyway (controller-runtime sets no client-side rate limit).
const DefaultMaxConcurrentReconciles = 4

// TaskRunReconciler runs TaskRuns as Pods.
type TaskRunReconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly, for the rare Pod the cache
	// cannot show yet. SetupWithManager defaults it to the manager's.
	APIReader client.Reader
	// Scheme sets owner references. SetupWithManager defaults it to the manager's.
	Scheme *runtime.Scheme
	// Recorder emits an Event on each transition of a run. SetupWithManager
	// defaults it to the manager's.
	Recorder events.EventRecorder
	// DefaultTimeout bounds a run whose spec.timeout is absent; 0 means none.
	DefaultTimeout time.Duration
	// MaxConcurrentReconciles is how many TaskRuns are reconciled at once; 0
	// means DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
	// DefaultTTLAfterFinished is how long after it finished a run without
	// spec.ttlSecondsAfterFinished is deleted; 0 keeps it.
	DefaultTTLAfterFinished time.Duration
	// ImagePullTimeout is how long a step's image may fail to pull before
	// the run ends ImagePullFailed; 0 means no limit but the run's timeout.
	ImagePullTimeout time.Duration
	// PodConfigTimeout is how long the kubelet may fail to make a step's
	// container or mount a volume for the Pod's configuration before the
	// run ends PodConfigFailed; 0 means no limit but the run's timeout.
	PodConfigTimeout time.Duration
	// NodeLostTimeout is how long the node of a run's Pod may be not ready
	// before the Pod counts as lost with it (docs/lifecycle.md, "Node
	// faults"), and the tolerationSeconds of its Pods for the taints of such
	// a node; 0 means that only a node deleted or tainted out of service
	// loses a Pod, and leaves the cluster's default tolerations.
	NodeLostTimeout time.Duration
	// PodShape is the shape of the Pods it builds (pod_shape.go):
	// runstate.PodShapeInitContainers, the default, or
	// runstate.PodShapeChained.
	PodShape string

	// now is the clock, time.Now when nil; tests of the stages set it.
	now func() time.Time
	// writes knows the controller's last status write to each run.
	writes writeLog
	// podReads knows the runs that never started whose Pod is read from the
	// API server nonetheless.
	podReads podReads
	// retries is the controller's work queue rate limiter; SetupWithManager
	// sets it.
	retries *retryLimiter
	// unrestricted remembers the namespaces last read not to enforce the
	// restricted Pod Security level; SetupWithManager sets it.
	unrestricted *unrestrictedNamespaces
	// podLevel knows whether the API server keeps Pod-level resources.
	podLevel podLevelResources
}

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
// time to live has passed.
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
	err := r.runStages(ctx, s)
	if errors.Is(err, errRunChanged) {
		log.FromContext(ctx).V(1).Info("TaskRun changed since the cache read it; its event will reconcile the run", "error", err.Error())
		return ctrl.Result{}, nil
	}
	if s.outcome == nil {
		// An error stopped the stages before they decided anything.
		return ctrl.Result{}, err
	}
	s.outcome = s.pendingTooLong(retryingWhilePending(s.run, s.outcome))
	if s.startedFirstPod() {
		// The Pod's own watch event reconciles the run at once and records
		// its start then (startTime is the Pod's creation): under load, when
		// the work queue reaches the run again after its Pod has moved on,
		// one status write says what two would have. That later reconcile
		// reads the Pod from the API server should the cache, which holds no
		// ended Pod, lack it.
		r.podReads.mark(req.NamespacedName)
		return ctrl.Result{RequeueAfter: s.requeueAfter()}, err
	}
	applyStatus(s.run, s.outcome, s.startTime(), s.pod, s.podSteps(), s.now.Truncate(time.Second))
	if s.outcome.finished() && s.node.Lost() {
		markStepsLost(s.run.Status.Steps)
	}
	if patchErr := r.patchStatus(ctx, s); patchErr != nil {
		return ctrl.Result{}, errors.Join(err, patchErr)
	}
	r.observeTransition(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.requeueAfter()}, nil
}

// forget drops what the reconciler remembers of a run that is finished or gone.
func (r *TaskRunReconciler) forget(key types.NamespacedName) {
	r.writes.forget(key)
	r.podReads.forget(key)
}

// clock reads the reconciler's clock: time.Now unless a test set another.
func (r *TaskRunReconciler) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// runStages runs the reconcile's stages in order until one decides the
// outcome. ("Phase" is v1alpha1's word for a run's status, never a stage.)
func (r *TaskRunReconciler) runStages(ctx context.Context, s *runScope) error {
	stages := []func(context.Context, *runScope) error{
		r.findPod,
		r.endOrRetry,
		r.stopIfRequested,
		r.failIfHeld,
		r.createPod,
		trackProgress,
	}
	for _, stage := range stages {
		if err := stage(ctx, s); err != nil {
			return err
		}
		if s.outcome != nil {
			return nil
		}
	}
	return nil
}

// patchStatus writes the run's status with a merge patch against the run as
// read, if it changed. The patch carries the resourceVersion read: a run
// changed since (by a v1alpha1 client, say) makes it fail rather than apply a
// transition twice, so that each Event and metric is recorded once. The
// change that caused the conflict arrives as a watch event and reconciles
// the run again.
func (r *TaskRunReconciler) patchStatus(ctx context.Context, s *runScope) error {
	if !s.statusChanged() {
		return nil
	}
	patch := client.MergeFromWithOptions(s.original, client.MergeFromWithOptimisticLock{})
	err := r.Client.Status().Patch(ctx, s.run, patch)
	switch {
	case err == nil:
		s.written = true
		r.writes.wrote(s.run)
		return nil
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		log.FromContext(ctx).V(1).Info("TaskRun changed since it was read; reconciling it again", "error", err.Error())
		return nil
	default:
		return fmt.Errorf("patching status of TaskRun %s/%s: %w", s.run.Namespace, s.run.Name, err)
	}
}
