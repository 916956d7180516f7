package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/nodefault"
)

// This file watches the Nodes of runs' Pods (docs/lifecycle.md, "Node
// faults"). The controller reads the node of each run's Pod that has not
// ended by its kubelet's word (readNode), nodefault judges it, and
// rundecision decides what the run makes of that: a node deleted, tainted
// out of service, or not ready for longer than --node-lost-timeout loses the
// Pod, and the run ends PodFailed naming the node, or, if it retries, waits
// until the old Pod cannot still run.
//
// Nodes are cached, trimmed to what is judged (runcache.TrimNode), and watched for
// what changes a judgement (nodeHealthChanged): a node's deletion, its Ready
// condition's status, its out-of-service taint. A Node event reconciles only
// the runs whose Pods are on it, found through an index of the cached Pods
// by node (podNodeIndex); the time-based part, a node not ready for
// --node-lost-timeout, is a requeue when it will have been.
//
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// podNodeIndex indexes the cached Pods by the node they are bound to, so
// that a Node's change finds the runs whose Pods are on it without listing
// every Pod.
const podNodeIndex = "spec.nodeName"

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
