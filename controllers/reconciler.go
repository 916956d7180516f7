package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/rundecision"
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

// DefaultImagePullTimeout is the default of --image-pull-timeout: long enough
// for a large image on a slow registry, or a registry's brief outage (the
// kubelet retries a pull with a backoff of up to 5 minutes), short against
// the default run timeout of an hour.
const DefaultImagePullTimeout = 5 * time.Minute

// DefaultPodConfigTimeout is the default of --pod-config-timeout: time to
// create the ConfigMap, Secret or claim a run was started before, once its
// Pending message names it, and for the kubelet to see it (it mounts again
// with a backoff of up to about 2 minutes, and makes a container again
// sooner); short against the default run timeout of an hour.
const DefaultPodConfigTimeout = 2 * time.Minute

// DefaultNodeLostTimeout is the default of --node-lost-timeout. The node
// lifecycle controller marks a silent node's Ready condition Unknown only
// after its grace period (--node-monitor-grace-period, 50 s by default), so
// a node not ready at all has been out of touch for that long already: a
// minute more rides out a kubelet's or a network's restart, and gives up a
// run's Pod within about two minutes of its node's failure, against the five
// that Kubernetes' default tolerations wait before evicting it.
const DefaultNodeLostTimeout = time.Minute

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
	// runstate.PodShapeChained, the manager's default (--pod-shape), or
	// runstate.PodShapeInitContainers, which the zero value builds too.
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

// runScope is one reconcile of a run: its current attempt, which the
// decisions (internal/rundecision) judge, and what the writes need besides.
type runScope struct {
	*rundecision.Attempt
	// original is the run as read: the base of the status patch.
	original *v1.TaskRun
	// written says that the status patch landed.
	written bool
}

func (r *TaskRunReconciler) newRunScope(run *v1.TaskRun) *runScope {
	return &runScope{Attempt: rundecision.NewAttempt(run, r.clock(), r.DefaultTimeout), original: run.DeepCopy()}
}

// clock reads the reconciler's clock: time.Now unless a test set another.
func (r *TaskRunReconciler) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// heldTimeouts are the manager's bounds on a Pod the kubelet holds back.
func (r *TaskRunReconciler) heldTimeouts() rundecision.HeldTimeouts {
	return rundecision.HeldTimeouts{ImagePull: r.ImagePullTimeout, PodConfig: r.PodConfigTimeout}
}

// forget drops what the reconciler remembers of a run that is finished or gone.
func (r *TaskRunReconciler) forget(key types.NamespacedName) {
	r.writes.forget(key)
	r.podReads.forget(key)
}
