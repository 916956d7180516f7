// Package runcache says what the manager's cache holds of the objects the
// controller reads (TaskRuns, their Pods, Nodes), and how it trims them to
// what the controller reads of them: the cache holds every run kept, every
// Pod of a run that goes on and every Node, so what it drops is most of the
// manager's memory. The controller never writes back what it read from the
// cache but with patches of the fields it sets, so nothing trimmed here is
// ever written back.
package runcache

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// Options returns the manager's cache options that the controller relies on. The cache strips managedFields, which the controller never reads and
// which can double an object's size, and keeps finished runs trimmed to what
// the controller reads of them (TrimRun). Of Pods it holds only those that
// minitask runs, rather than every Pod of the cluster, and of those only the
// ones that have not ended (runningPods), trimmed to what it reads (TrimPod).
// Nodes it holds trimmed to what judges the Pods on them (TrimNode).
func Options() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&v1.TaskRun{}: {Transform: TrimRun},
			&corev1.Pod{}: {
				Label:     labels.SelectorFromSet(labels.Set{runstate.LabelManagedBy: runstate.ManagedByValue}),
				Field:     runningPods,
				Transform: TrimPod,
			},
			&corev1.Node{}: {Transform: TrimNode},
		},
	}
}

// runningPods selects the Pods that have not ended, Succeeded or Failed. An
// ended Pod never changes again but to go away, and its run needs it once,
// to record how it ended; the Pods of finished runs would otherwise be most
// of the cache, for as long as their runs are kept. When a Pod ends, the
// watch reports it deleted from the selection, which reconciles its run
// (Owns), and the reconcile, not finding it in the cache, reads it from the
// API server: one read per run, and no write. The alternative, a
// label the controller sets on the Pods of finished runs, would cost a Pod
// write per run.
var runningPods = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)
