//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// evictAnnotation asks the local cluster's fake kubelet to evict a running
// Pod, as a kubelet does when its node runs low on memory
// (hack/kwok/stages/pod-evict.yaml); its value is the eviction's message.
const evictAnnotation = "local-cluster.minitask.dev/evict"

// lowMemory is what the kubelet says when it evicts a Pod to free memory.
const lowMemory = "The node was low on resource: memory."

// checkRetryAfterEviction runs a Task with one retry and has the fake
// kubelet evict its first Pod while its step runs. The run retries with a
// second Pod and succeeds; status.attempts records the first Pod as failed
// with reason PodFailed, and that Pod is kept, as the kubelet left it, for
// its logs: both Pods exist.
func checkRetryAfterEviction(t *testing.T, c *cluster) {
	ctx := context.Background()
	// Long enough for the eviction to land while the step runs.
	create(t, c, wrappers.Task(ns, "evictable").Step("work", "alpine:3", "sleep 3").Obj())
	run := wrappers.TaskRun(ns, "evicted", "evictable").Obj()
	run.Spec.Retries = ptr.To[int32](1)
	create(t, c, run)
	firstPod, secondPod := runstate.AttemptPodName(run, 0), runstate.AttemptPodName(run, 1)

	pod := &corev1.Pod{}
	waitFor(t, time.Minute, "the first attempt's step to run", func(ctx context.Context) error {
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: firstPod}, pod); err != nil {
			return err
		}
		if !stepRunning(pod) {
			return fmt.Errorf("Pod %s is %s with no step running", firstPod, pod.Status.Phase)
		}
		return nil
	})
	patch := client.MergeFrom(pod.DeepCopy())
	metav1.SetMetaDataAnnotation(&pod.ObjectMeta, evictAnnotation, lowMemory)
	if err := c.client.Patch(ctx, pod, patch); err != nil {
		t.Fatalf("asking kwok to evict Pod %s: %v", firstPod, err)
	}
	evictedAt := time.Now()

	got := waitFinished(t, c, time.Minute, run.Name)[run.Name]
	t.Logf("TaskRun %s ended %s %.1fs after the eviction", run.Name, outcome(got), time.Since(evictedAt).Seconds())
	if outcome(got) != "True/Succeeded" {
		t.Errorf("TaskRun %s ended %s (%q), want True/Succeeded", run.Name, outcome(got), conditionMessage(got))
	}
	if got.Status.PodName != secondPod {
		t.Errorf("TaskRun %s: status.podName %q, want the second attempt's %q", run.Name, got.Status.PodName, secondPod)
	}
	checkEvictedAttempt(t, got, firstPod)

	pods, err := podsByRun(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]string{}
	for _, p := range pods[run.Name] {
		phases[p.Name] = string(p.Status.Phase) + "/" + p.Status.Reason
	}
	want := map[string]string{firstPod: "Failed/Evicted", secondPod: "Succeeded/"}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("the Pods of TaskRun %s as phase/reason (-want +got):\n%s", run.Name, diff)
	}
}

// checkEvictedAttempt checks that run's status.attempts holds one attempt:
// podName's, failed with PodFailed for its eviction, with its times.
func checkEvictedAttempt(t *testing.T, run *v1.TaskRun, podName string) {
	t.Helper()
	if len(run.Status.Attempts) != 1 {
		t.Fatalf("TaskRun %s: status.attempts %+v, want one", run.Name, run.Status.Attempts)
	}
	a := run.Status.Attempts[0]
	type attempt struct{ PodName, Reason string }
	if diff := cmp.Diff(attempt{podName, string(v1beta1.ReasonPodFailed)}, attempt{a.PodName, a.Reason}); diff != "" {
		t.Errorf("TaskRun %s: status.attempts[0] (-want +got):\n%s", run.Name, diff)
	}
	if !strings.Contains(a.Message, "evicted") || !strings.Contains(a.Message, lowMemory) {
		t.Errorf("TaskRun %s: status.attempts[0].message %q, want it to say the Pod was evicted, and why (%q)", run.Name, a.Message, lowMemory)
	}
	if a.StartTime == nil || a.CompletionTime == nil || a.CompletionTime.Before(a.StartTime) {
		t.Errorf("TaskRun %s: status.attempts[0] started %v, completed %v: want both, in that order", run.Name, a.StartTime, a.CompletionTime)
	}
}

// stepRunning reports whether one of pod's step containers is running.
func stepRunning(pod *corev1.Pod) bool {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range list {
			if s.State.Running != nil {
				return true
			}
		}
	}
	return false
}
