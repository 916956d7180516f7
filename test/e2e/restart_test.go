//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestRestartUnderLoad kills the manager (SIGKILL: no chance to finish
// anything) while it is starting 200 runs, then starts it again. Every run
// must finish, with exactly one Pod: whatever the dead manager had done,
// Pods it created but had not recorded included, is picked up, never redone.
func TestRestartUnderLoad(t *testing.T) {
	const n = 200
	ctx := context.Background()
	c := newCluster(t, "restart")
	m := startManager(t, c)
	create(t, c, wrappers.Task(ns, "work").Step("prepare", "alpine:3", "echo preparing").Step("work", "alpine:3", "echo working").Obj())

	start := time.Now()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("load-%03d", i)
	}
	createConcurrently(t, c, names)
	t.Logf("created %d TaskRuns (%.1fs)", n, time.Since(start).Seconds())

	// Mid-way: about half of the runs have their Pod.
	var withPod int
	waitFor(t, time.Minute, fmt.Sprintf("%d runs to have a Pod", n/2), func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if withPod = len(pods.Items); withPod < n/2 {
			return fmt.Errorf("%d Pods", withPod)
		}
		return nil
	})
	m.kill()
	killedAt := time.Since(start)
	// Read through v1, the storage version: with the manager dead, a
	// v1beta1 read needs the conversion webhook it served.
	var before minitaskv1.TaskRunList
	if err := c.client.List(ctx, &before, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, run := range before.Items {
		if c := meta.FindStatusCondition(run.Status.Conditions, minitaskv1.ConditionSucceeded); c != nil && c.Status != metav1.ConditionUnknown {
			done++
		}
	}
	t.Logf("killed the manager at %.1fs: at least %d of %d runs had a Pod, %d had finished", killedAt.Seconds(), withPod, n, done)
	if done == n {
		t.Fatalf("every run had finished before the manager was killed: the test proves nothing; kill it earlier")
	}

	m.start()
	got := waitFinished(t, c, 3*time.Minute, names...)
	t.Logf("every run finished %.1fs after the start, %.1fs after the restart",
		time.Since(start).Seconds(), (time.Since(start) - killedAt).Seconds())

	byRun, err := podsByRun(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, name := range names {
		run, pods := got[name], byRun[name]
		if o := outcome(run); o != "True/Succeeded" || len(pods) != 1 || pods[0].Name != runstate.PodName(run) || run.Status.PodName != runstate.PodName(run) {
			bad = append(bad, fmt.Sprintf("%s: %s, podName %q, Pods %v", name, o, run.Status.PodName, podNames(pods)))
		}
		delete(byRun, name)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d runs did not succeed with exactly one Pod, named %s; the first ones:\n%v",
			len(bad), n, runstate.PodName(runNamed("RUN")), first(bad, 20))
	}
	if len(byRun) > 0 {
		t.Errorf("Pods of no run: %v", byRun)
	}
}

// createConcurrently creates a v1beta1 TaskRun of Task work for each name,
// a few at a time, as a CI system starting a batch would.
func createConcurrently(t testing.TB, c *cluster, names []string) {
	t.Helper()
	inParallel(t, loadWorkers, names, func(name string) error {
		if err := c.client.Create(context.Background(), wrappers.TaskRun(ns, name, "work").Obj()); err != nil {
			return fmt.Errorf("creating TaskRun %s: %w", name, err)
		}
		return nil
	})
}
