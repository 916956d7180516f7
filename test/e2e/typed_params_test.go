//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// checkTypedParams applies the typed-params samples with kubectl, as a user
// would (config/samples/v1_*typed_params.yaml: an array and an object
// param, a run giving both and both timeouts), and reads the Pod the
// controller made: the array's items are one argument each, the item with
// spaces one argument still, and the object's keys are in the image's env.
// (kwok runs nothing; node_samples_test.go reads what the steps printed on
// a real node.)
func checkTypedParams(t *testing.T, c *cluster) {
	ctx := context.Background()
	samples := filepath.Join(c.repo, "config/samples")
	for _, f := range []string{"v1_task_typed_params.yaml", "v1_taskrun_typed_params.yaml"} {
		if out, err := c.runKubectl(ctx, "apply", "-n", ns, "-f", filepath.Join(samples, f)); err != nil {
			t.Fatalf("kubectl apply -f %s: %v\n%s", f, err, out)
		}
	}
	run := waitFinished(t, c, time.Minute, "list-files-run")["list-files-run"]
	if outcome(run) != "True/Succeeded" {
		t.Errorf("TaskRun list-files-run ended %s (%q), want True/Succeeded", outcome(run), conditionMessage(run))
	}
	pod := &corev1.Pod{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runstate.PodName(run)}, pod); err != nil {
		t.Fatal(err)
	}
	type step struct {
		Command, Args []string
		Env           map[string]string
	}
	var got []step
	for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		s := step{Args: ctr.Args, Env: map[string]string{}}
		if ctr.Name == "step-list" {
			s.Command = ctr.Command
		}
		for _, e := range ctr.Env {
			s.Env[e.Name] = e.Value
		}
		got = append(got, s)
	}
	want := []step{
		{Command: []string{"sh", "-c", `for f; do echo "file: $f"; done`, "list"}, Args: []string{"main.go", "notes for review.txt"}, Env: map[string]string{}},
		{Env: map[string]string{"IMAGE": "example.org/shop:1.2"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Pod of TaskRun list-files-run, its steps' command, args and env (-want +got):\n%s", diff)
	}
}
