package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
	"github.com/minitask-dev/minitask/internal/runpod"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file is what the controller does with a run whose Pod is on a node
// that has failed (docs/lifecycle.md, "Node faults"). A Pod's status is
// written by its kubelet: a node that is down, or cut off, leaves its Pods
// Running for ever, and a Pod's activeDeadlineSeconds is enforced by that
// same kubelet. So the controller reads the node of each run's Pod that has
// not ended by its kubelet's word (runpod.JudgedByNode) and judges it
// (nodefault.Judge): a node deleted, tainted out of service, or not ready
// for longer than --node-lost-timeout loses the Pod, and the run ends
// PodFailed naming the node; one that retries starts its next attempt only
// once the old Pod cannot still run (its node deleted or tainted out of
// service, or the Pod gone), and waits, Retrying, until then; and a run
// cancelled or timed out says that its Pod may go on where no kubelet can
// stop it.
//
// Nodes are cached, trimmed to what is judged (trimNode), and watched for
// what changes a judgement (nodeHealthChanged): a node's deletion, its Ready
// condition's status, its out-of-service taint. A Node event reconciles only
// the runs whose Pods are on it, found through an index of the cached Pods
// by node (podNodeIndex); the time-based part, a node not ready for
// --node-lost-timeout, is a requeue when it will have been.
//
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// DefaultNodeLostTimeout is the default of --node-lost-timeout. The node
// lifecycle controller marks a silent node's Ready condition Unknown only
// after its grace period (--node-monitor-grace-period, 50 s by default), so
// a node not ready at all has been out of touch for that long already: a
// minute more rides out a kubelet's or a network's restart, and gives up a
// run's Pod within about two minutes of its node's failure, against the five
// that Kubernetes' default tolerations wait before evicting it.
const DefaultNodeLostTimeout = time.Minute

// podNodeIndex indexes the cached Pods by the node they are bound to, so
// that a Node's change finds the runs whose Pods are on it without listing
// every Pod.
const podNodeIndex = "spec.nodeName"

// eventNodeLost is the Event reason of a run whose Pod is lost with its node
// and which waits, before its next attempt, for that Pod to be fenced.
const eventNodeLost = "NodeLost"

// readNode judges the node of the run's Pod, if its node has a say
// (runpod.JudgedByNode), into s.node. A Pod on a node that is not ready yet
// for long enough to be lost asks for the run to be looked at again when it
// will be: nothing else would tell.
func (r *TaskRunReconciler) readNode(ctx context.Context, s *runScope) error {
	s.node = nil
	name, judged := runpod.JudgedByNode(s.pod)
	if !judged {
		return nil
	}
	node, err := r.getNode(ctx, name)
	if err != nil {
		return err
	}
	v := nodefault.Judge(nodefault.Read(name, node), s.pod.DeletionTimestamp != nil, s.now, r.NodeLostTimeout)
	s.node = &v
	if v.LostIn > 0 {
		s.recheckWithin(v.LostIn)
	}
	if v.Lost() || v.NotReady {
		log.FromContext(ctx).V(1).Info("the run's Pod is on a node that is not ready or lost", "pod", s.pod.Name, "node", name,
			"fault", v.Fault, "fenced", v.Fenced, "why", v.Why)
	}
	return nil
}

// getNode reads the Node named name from the cache; nil if it does not
// exist. A Node the cache lacks is looked up on the API server before it is
// taken for deleted, as deleted ends a run or starts another attempt: a
// node that has just registered may not have reached the cache yet. That
// read is one per run whose Pod's node is gone, and the run then ends or
// moves on.
func (r *TaskRunReconciler) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	key := client.ObjectKey{Name: name}
	node := &corev1.Node{}
	err := r.Client.Get(ctx, key, node)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, node)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting Node %s: %w", name, err)
	}
	return node, nil
}

// lostWithNode is the outcome of an attempt whose Pod is lost with its node
// (s.node): PodFailed, naming the node and why. A run cancelled or timed out
// meanwhile ends so instead, as it would with its Pod deleted, saying that
// the Pod may still run (mayStillRun).
func (s *runScope) lostWithNode() *outcome {
	switch {
	case runstate.CancelRequested(s.run):
		return s.mayStillRun(cancelled(s.run))
	case s.timedOut():
		return s.mayStillRun(timedOut(s.run, s.timeout))
	}
	return failed(v1.ReasonPodFailed, "Pod %q was lost with its node %q: %s", s.podName, s.node.Node, s.node.Why)
}

// mayStillRun adds to o, the end of a run the controller stops, that the
// run's Pod may still be running where no kubelet can stop it: on a node
// that is not ready, and not fenced. A Pod with no such node is stopped by
// its kubelet, or runs nowhere.
func (s *runScope) mayStillRun(o *outcome) *outcome {
	if s.node == nil || !s.node.NotReady {
		return o
	}
	o.message += fmt.Sprintf("; its Pod %q may still be running on node %q, which is not ready: no kubelet could stop it", s.podName, s.node.Node)
	return o
}

// waitForFence is the outcome of a run whose attempt's Pod is lost with a
// node that is not fenced, and that retries that failure (o): Retrying, the
// message saying how the attempt failed and what the next attempt waits
// for. Another attempt's Pod now could run beside this one, which may go on
// behind a network partition, or when its node comes back.
func (s *runScope) waitForFence(o *outcome) *outcome {
	n := len(s.run.Status.Attempts)
	return unknown(v1.ReasonRetrying,
		"attempt %d of %d failed (%s): %s; attempt %d's Pod %q may still be running on node %q, which is not ready: "+
			"waiting for the node to be deleted, tainted %s, or the Pod to be gone before attempt %d",
		n+1, runstate.AttemptsAllowed(s.run), o.reason, o.message, n+1, s.podName, s.node.Node, corev1.TaintNodeOutOfService, n+2)
}

// nodeNotReady adds to o, a run's progress, that its Pod's node is not ready
// (and so that what the Pod's status says of its steps may be stale).
func (s *runScope) nodeNotReady(o *outcome) *outcome {
	if s.node == nil || !s.node.NotReady || o.finished() {
		return o
	}
	o.message += fmt.Sprintf("; node %q: %s", s.node.Node, s.node.Why)
	return o
}

// stopPodOnLostNode stops the Pod of a run that ends while its Pod is lost
// with its node (a cancel, a timeout, a failure that is not retried), as
// stopPod does: the lowered deadline, or the deletion, is for a kubelet that
// comes back, which then kills the Pod rather than go on with a run that
// has ended. A Pod already being deleted needs nothing.
func (r *TaskRunReconciler) stopPodOnLostNode(ctx context.Context, s *runScope) error {
	if s.pod == nil || s.pod.DeletionTimestamp != nil || !s.node.Lost() || s.pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	return r.stopPod(ctx, s.pod, s.now)
}

// stepReasonNodeLost is the reason of each step that had not ended when its
// run ended with its Pod lost with its node.
const stepReasonNodeLost = "NodeLost"

// markStepsLost reports every step of a run that ended with its Pod lost
// with its node, and that had not ended, as Terminated with the reason
// NodeLost, and neither an exit code nor an end: no kubelet will say how or
// when it ended, and the run, final, is never written again, so a Running
// or Waiting step would claim for ever that it may yet run.
func markStepsLost(steps []v1.StepState) {
	for i := range steps {
		if steps[i].State != v1.StepTerminated {
			steps[i].State, steps[i].Reason = v1.StepTerminated, stepReasonNodeLost
		}
	}
}

// indexPodNode registers podNodeIndex with indexer.
func indexPodNode(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &corev1.Pod{}, podNodeIndex, func(obj client.Object) []string {
		if node := obj.(*corev1.Pod).Spec.NodeName; node != "" {
			return []string{node}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexing Pods by %s: %w", podNodeIndex, err)
	}
	return nil
}

// runsOnNode returns a map function from a Node to the runs whose Pods are
// on it, read through reader's podNodeIndex: the cache holds only the Pods
// of minitask that have not ended, which are the ones a node's fault
// concerns.
func runsOnNode(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, node client.Object) []reconcile.Request {
		var pods corev1.PodList
		if err := reader.List(ctx, &pods, client.MatchingFields{podNodeIndex: node.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing the Pods on a Node whose health changed", "node", node.GetName())
			return nil
		}
		var requests []reconcile.Request
		for i := range pods.Items {
			owner := metav1.GetControllerOf(&pods.Items[i])
			if owner == nil || owner.Kind != "TaskRun" || !strings.HasPrefix(owner.APIVersion, v1.GroupVersion.Group+"/") {
				continue
			}
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: pods.Items[i].Namespace, Name: owner.Name}})
		}
		return requests
	}
}

// nodeHealthChanged passes the Node events that may change a judgement of
// its Pods: a deletion, and an update of what nodefault.Read reads (the
// Ready condition's status, reason, message and time, the out-of-service
// taint). The kubelet's status reports, which change nothing but its
// heartbeat, and the creations that the informer's first list reports for
// every node, reconcile nothing.
var nodeHealthChanged = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*corev1.Node)
		after, okAfter := e.ObjectNew.(*corev1.Node)
		if !okBefore || !okAfter {
			return true
		}
		return !equality.Semantic.DeepEqual(nodefault.Read(before.Name, before), nodefault.Read(after.Name, after))
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
