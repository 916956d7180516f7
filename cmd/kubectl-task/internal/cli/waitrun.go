package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file waits for a run that start or rerun created to finish (--wait,
// --showlog). It watches the run, as kubectl wait does, rather than polling
// it: the controller deletes a run whose TTL after finishing is 0, or short,
// right after its final status write, and a poll would find it gone rather
// than finished. A watch from the resourceVersion the run was read at sees
// every status written since, even if the run is deleted at once.

// runOutcome is what waiting for a run found: the run as it finished, or
// why the wait ended without it.
type runOutcome struct {
	run *v1.TaskRun
	err error
}

// watchRun waits in the background for run, as create returned it, to
// finish. It is started before --showlog follows the logs, so that what the
// run goes through meanwhile is seen, however long the logs take.
func watchRun(ctx context.Context, c *Clients, run *v1.TaskRun) <-chan runOutcome {
	outcome := make(chan runOutcome, 1)
	go func() {
		done, err := waitForRun(ctx, c, run)
		outcome <- runOutcome{run: done, err: err}
	}()
	return outcome
}

// waitForRun watches run from its resourceVersion until it has finished,
// and returns it as it finished.
func waitForRun(ctx context.Context, c *Clients, run *v1.TaskRun) (*v1.TaskRun, error) {
	for !runstate.Finished(run) {
		last, err := watchUntilFinished(ctx, c, run)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err == nil:
			return last, nil
		case errors.As(err, new(*runDeletedError)):
			return nil, err
		case !apierrors.IsGone(err) && !apierrors.IsResourceExpired(err):
			return nil, waitError(last, err, c.Host)
		}
		// The API server no longer keeps the changes since run's
		// resourceVersion (the watch was cut off for long): what happened
		// meanwhile is lost; go on from the run as it is now.
		run = &v1.TaskRun{}
		err = c.Client.Get(ctx, client.ObjectKey{Namespace: last.Namespace, Name: last.Name}, run)
		if apierrors.IsNotFound(err) {
			return nil, &runDeletedError{run: last, unseen: true}
		}
		if err != nil {
			return nil, waitError(last, err, c.Host)
		}
	}
	return run, nil
}

// waitError says that the wait for run failed, not the run, which goes on.
func waitError(run *v1.TaskRun, err error, host string) error {
	return fmt.Errorf("waiting for TaskRun %s to finish: %w", run.Name, clusterError(err, host))
}

// watchUntilFinished watches run from its resourceVersion, through
// client-go's RetryWatcher, which watches again from the last change seen
// when the API server ends a watch, until a change shows it finished. On an
// error it returns run as it was last seen, with the error.
func watchUntilFinished(ctx context.Context, c *Clients, run *v1.TaskRun) (*v1.TaskRun, error) {
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watcher := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		w, err := c.Client.Watch(ctx, &v1.TaskRunList{}, client.InNamespace(run.Namespace),
			client.MatchingFields{"metadata.name": run.Name}, &client.ListOptions{Raw: &opts})
		if err != nil && !utilnet.IsProbableEOF(err) && !utilnet.IsTimeout(err) {
			// RetryWatcher would try again for ever, logging each failure
			// through klog onto the user's terminal, or for a resourceVersion
			// too old, silently: end the wait with the error instead, and
			// give RetryWatcher the io.EOF it stops on quietly.
			stop(err)
			return nil, io.EOF
		}
		return w, err
	}}
	last := run
	_, err := watchtools.Until(wctx, run.ResourceVersion, watcher, func(ev watch.Event) (bool, error) {
		switch ev.Type {
		case watch.Error:
			// RetryWatcher passes on only what it cannot resume from: a
			// resourceVersion too old.
			return false, apierrors.FromObject(ev.Object)
		case watch.Added, watch.Modified, watch.Deleted:
		default:
			return false, nil
		}
		seen, ok := ev.Object.(*v1.TaskRun)
		if !ok {
			return false, fmt.Errorf("watching TaskRun %s: got a %T", run.Name, ev.Object)
		}
		last = seen
		if ev.Type == watch.Deleted && !runstate.Finished(seen) {
			return false, &runDeletedError{run: seen}
		}
		return runstate.Finished(seen), nil
	})
	if cause := context.Cause(wctx); err != nil && ctx.Err() == nil && cause != nil {
		err = cause
	}
	return last, err
}

// runDeletedError says that a run was deleted before it was seen finished,
// and the likely cause.
type runDeletedError struct {
	// run is the run as last seen.
	run *v1.TaskRun
	// unseen is set when the deletion itself was not seen either: the run
	// may have finished meanwhile.
	unseen bool
}

func (e *runDeletedError) Error() string {
	run := e.run
	if !e.unseen {
		return fmt.Sprintf("TaskRun %s was deleted while it was %s, before it finished: someone deleted it, or its namespace, "+
			"and its outcome is lost", run.Name, runstate.Summary(run))
	}
	return fmt.Sprintf("TaskRun %s was deleted before its outcome could be seen (it was %s when last seen): if it finished, "+
		"its time to live after finishing (spec.ttlSecondsAfterFinished, or the manager's --default-ttl-after-finished) was short "+
		"enough for the controller to delete it at once; its Events may remain: kubectl get events -n %s --field-selector involvedObject.name=%s",
		run.Name, runstate.Summary(run), run.Namespace, run.Name)
}
