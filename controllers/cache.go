package controllers

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// taskRefIndex indexes TaskRuns by the Task they run, so that a Task's
// creation finds the runs waiting for it without listing every run.
const taskRefIndex = "spec.taskRef.name"

// indexTaskRef registers taskRefIndex with indexer.
func indexTaskRef(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &v1.TaskRun{}, taskRefIndex, func(obj client.Object) []string {
		// A run with an inline spec waits for no Task.
		name := obj.(*v1.TaskRun).Spec.TaskRef.Name
		if name == "" {
			return nil
		}
		return []string{name}
	})
	if err != nil {
		return fmt.Errorf("indexing TaskRuns by %s: %w", taskRefIndex, err)
	}
	return nil
}

// runsWaitingFor returns a map function from a Task to the runs in its
// namespace that wait for it, read through reader's taskRefIndex. Runs not yet
// seen count as waiting: a Task created while one of them is first reconciled
// must not be missed.
func runsWaitingFor(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, task client.Object) []reconcile.Request {
		var runs v1.TaskRunList
		err := reader.List(ctx, &runs, client.InNamespace(task.GetNamespace()), client.MatchingFields{taskRefIndex: task.GetName()})
		if err != nil {
			log.FromContext(ctx).Error(err, "listing TaskRuns that wait for Task", "task", task.GetName())
			return nil
		}
		var requests []reconcile.Request
		for i := range runs.Items {
			if runstate.WaitingForTask(&runs.Items[i]) {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&runs.Items[i])})
			}
		}
		return requests
	}
}

// writeLog remembers the resourceVersion of the controller's last status write
// to each run still going, so that a reconcile can tell that the cache has not
// caught up with it yet. Such a reconcile would redo the last transition from
// a stale run and lose to the patch's optimistic lock; it is skipped instead,
// for the write's own watch event reconciles the run again, from the fresh
// object and with whatever else changed meanwhile.
type writeLog struct {
	versions sync.Map // types.NamespacedName to resourceVersion
}

// wrote records that run, as it is now, is the controller's last write to it.
func (l *writeLog) wrote(run *v1.TaskRun) {
	l.versions.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
}

// forget drops what l knows of a run that is finished or gone.
func (l *writeLog) forget(key types.NamespacedName) {
	l.versions.Delete(key)
}

// isStale reports whether run, as read from the cache, is older than the
// controller's last write to it. Resource versions that cannot be compared
// (a storage that does not use etcd's revisions) never count as stale.
func (l *writeLog) isStale(run *v1.TaskRun) bool {
	last, ok := l.versions.Load(client.ObjectKeyFromObject(run))
	if !ok {
		return false
	}
	order, err := resourceversion.CompareResourceVersion(run.ResourceVersion, last.(string))
	return err == nil && order < 0
}

// podReads remembers the runs whose Pod must be read from the API server
// although the run never started: those whose Pod's creation found one there
// already (createPod), left by a reconcile that crashed before recording it,
// or not controlled by the run at all. A run that never started reads its
// Pod from the cache alone otherwise (findPod), which saves every new run a
// GET that finds nothing; such a Pod, once it has ended, the cache does not
// hold (runningPods), so the marked run reads it from the API server, as a
// started run does, until it is finished or gone.
type podReads struct {
	runs sync.Map // types.NamespacedName to struct{}
}

// mark makes key's later reconciles read its Pod from the API server.
func (p *podReads) mark(key types.NamespacedName) { p.runs.Store(key, struct{}{}) }

// marked reports whether key's Pod is read from the API server.
func (p *podReads) marked(key types.NamespacedName) bool {
	_, ok := p.runs.Load(key)
	return ok
}

// forget drops a run that is finished or gone.
func (p *podReads) forget(key types.NamespacedName) { p.runs.Delete(key) }
