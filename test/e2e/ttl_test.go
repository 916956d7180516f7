//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// ttlSeconds is the test run's spec.ttlSecondsAfterFinished.
const ttlSeconds = 5

// ttlSlack is how long past its time to live the run may take to be gone:
// the controller deletes it in the foreground, so the garbage collector
// deletes its Pod first, then lets the run go.
const ttlSlack = 5 * time.Second

// checkTimeToLive runs a Task with ttlSecondsAfterFinished 5 and watches the
// run once it has finished: the controller deletes it no earlier than 5 s
// after its completionTime, and it is gone, its Pod with it, within 10 s.
func checkTimeToLive(t *testing.T, c *cluster) {
	create(t, c, wrappers.Task(ns, "short-lived").Step("say", "alpine:3", "echo done").Obj())
	run := wrappers.TaskRun(ns, "short-lived", "short-lived").Obj()
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](ttlSeconds)
	create(t, c, run)
	finished := waitFinished(t, c, time.Minute, run.Name)[run.Name]
	if outcome(finished) != "True/Succeeded" {
		t.Fatalf("TaskRun %s ended %s (%q), want True/Succeeded", run.Name, outcome(finished), conditionMessage(finished))
	}
	completed := finished.Status.CompletionTime.Time
	podName := finished.Status.PodName

	// Poll often: the window is seconds wide. The last time the run is seen
	// not yet deleted bounds the deletion from below, even when it and its
	// Pod go between two polls, as they do once the garbage collector is
	// quick; deletionTimestamp, when seen, is the API server's own record.
	var deleted, lastAlive time.Time
	ttl := time.Duration(ttlSeconds) * time.Second
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, ttl+time.Minute, true,
		func(ctx context.Context) (bool, error) {
			// Seen alive by a read asked for at asked, the run was not
			// deleted before asked, however long the answer took.
			asked, current := time.Now(), &v1beta1.TaskRun{}
			err := c.client.Get(ctx, client.ObjectKeyFromObject(run), current)
			switch {
			case err == nil && current.DeletionTimestamp == nil:
				lastAlive = asked
				return false, nil
			case err == nil:
				if deleted.IsZero() {
					deleted = current.DeletionTimestamp.Time
				}
				return false, nil
			case !apierrors.IsNotFound(err):
				return false, err
			}
			podErr := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, &corev1.Pod{})
			if podErr == nil {
				t.Errorf("TaskRun %s is gone but its Pod %s is still there", run.Name, podName)
				return true, nil
			}
			return apierrors.IsNotFound(podErr), client.IgnoreNotFound(podErr)
		})
	gone := time.Since(completed)
	if err != nil {
		t.Fatalf("TaskRun %s, completed at %s with a TTL of %v, is still there %.1fs later: %v",
			run.Name, completed.Format(time.RFC3339), ttl, gone.Seconds(), err)
	}
	t.Logf("TaskRun %s was last seen not deleted %.1fs after its completionTime (whole seconds), and gone with its Pod %.1fs after it",
		run.Name, lastAlive.Sub(completed).Seconds(), gone.Seconds())
	// completionTime is stored in whole seconds, up to 1 s before the run
	// really ended; the controller counts from it, as stored. Polls may
	// come late on a busy machine: 1 s of slack.
	if early := completed.Add(ttl - time.Second); lastAlive.Before(early) {
		t.Errorf("TaskRun %s was last seen not deleted at %s, before its completionTime %s + its TTL %v - 1 s",
			run.Name, lastAlive.Format(time.RFC3339Nano), completed.Format(time.RFC3339), ttl)
	}
	if !deleted.IsZero() && deleted.Before(completed.Add(ttl)) {
		t.Errorf("TaskRun %s was deleted at %s, before its completionTime %s + its TTL %v",
			run.Name, deleted.Format(time.RFC3339), completed.Format(time.RFC3339), ttl)
	}
	if gone > ttl+ttlSlack {
		t.Errorf("TaskRun %s was gone %.1fs after its completionTime, want within %v", run.Name, gone.Seconds(), ttl+ttlSlack)
	}
}
