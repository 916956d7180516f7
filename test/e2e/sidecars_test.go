//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// checkSidecars runs a Task with two sidecars, a database with a readiness
// probe and a script one, before two steps: the run succeeds, its Pod has
// the sidecars first among its init containers as native sidecars (in the
// shape the manager builds), and status.sidecars names both, in order.
func checkSidecars(t *testing.T, c *cluster, chained bool) {
	task := wrappers.Task(ns, "with-sidecars").Sidecars(
		v1.Sidecar{Name: "db", Image: "postgres:17", Env: []corev1.EnvVar{{Name: "POSTGRES_PASSWORD", Value: "test"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready"}}}, PeriodSeconds: 1}},
		v1.Sidecar{Name: "files", Image: "busybox:1", Script: "httpd -f -p 8080"},
	).Steps(
		v1.Step{Name: "migrate", Image: "alpine:3", Script: "echo migrating"},
		v1.Step{Name: "test", Image: "alpine:3", Script: "echo testing\nsleep 2"},
	).Obj()
	run := wrappers.TaskRun(ns, "with-sidecars", task.Name).Obj()
	run.Spec.Timeouts.Pending = v1.NewDuration(time.Minute)
	create(t, c, task, run)

	waitFinished(t, c, time.Minute, run.Name)
	// waitFinished reads v1beta1, which has no status.sidecars: read v1.
	got := &v1.TaskRun{}
	if err := c.client.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatalf("reading TaskRun %s: %v", run.Name, err)
	}
	if outcome(got) != "True/Succeeded" {
		t.Fatalf("TaskRun %s ended %s (%q), want True/Succeeded", run.Name, outcome(got), conditionMessage(got))
	}
	var names []string
	for _, s := range got.Status.Sidecars {
		names = append(names, s.Name)
		if s.State == "" || s.Ready == nil {
			t.Errorf("TaskRun %s: status.sidecars reports %s without its state or readiness: %+v", run.Name, s.Name, s)
		}
	}
	if diff := cmp.Diff([]string{"db", "files"}, names); diff != "" {
		t.Errorf("TaskRun %s: status.sidecars (-want +got):\n%s", run.Name, diff)
	}
	if diff := cmp.Diff([]stepEnd{{"migrate", 0, "Completed"}, {"test", 0, "Completed"}}, stepEnds(got)); diff != "" {
		t.Errorf("TaskRun %s: how its steps ended (-want +got):\n%s", run.Name, diff)
	}

	pod := podOf(t, c, got)
	if sidecars := runstate.NativeSidecars(pod); !slices.Equal(sidecars, []string{"sidecar-db", "sidecar-files"}) ||
		pod.Spec.InitContainers[0].Name != "sidecar-db" || pod.Spec.InitContainers[1].Name != "sidecar-files" {
		t.Errorf("Pod %s: native sidecars %v, init containers %v; want sidecar-db and sidecar-files first", pod.Name, sidecars, containerNames(pod.Spec.InitContainers))
	}
	if db := pod.Spec.InitContainers[0]; db.StartupProbe == nil || db.ReadinessProbe == nil {
		t.Errorf("Pod %s: sidecar-db has startupProbe %v and readinessProbe %v; want the startupProbe made of the readinessProbe", pod.Name, db.StartupProbe, db.ReadinessProbe)
	}
	if runstate.Chained(pod) != chained {
		t.Errorf("Pod %s: chained %t, want %t", pod.Name, runstate.Chained(pod), chained)
	}
	if steps := runstate.Steps(pod); len(steps) != 2 {
		t.Errorf("Pod %s: steps %v, want migrate and test", pod.Name, steps)
	}
}

// containerNames are the names of containers, in order.
func containerNames(containers []corev1.Container) []string {
	var names []string
	for _, c := range containers {
		names = append(names, c.Name)
	}
	return names
}
