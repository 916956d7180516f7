//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file holds the first release's fixtures: its CRDs (frozen in
// testdata/first-release-crds.yaml), and Tasks and TaskRuns in every phase
// written as it and its users wrote them.

// The first release's runs, one per phase, named after it.
const (
	runNew       = "new"       // phase "": not yet seen by any controller
	runPending   = "pending"   // started, no Pod yet
	runRunning   = "running"   // its Pod runs a step through the upgrade
	runSucceeded = "succeeded" // finished; its Pod is long gone
	runFailed    = "failed"    // finished; its failed Pod is still there

	// The Pods of the first release had names of their own: the next
	// release's controller must find them through status.podName, not by
	// its own naming (RUN-pod).
	runningPod   = "running-4x9kq"
	failedPod    = "failed-7c2mz"
	succeededPod = "succeeded-pod" // recorded in its status only
	// runningSeconds is how long the running run's step sleeps: long enough
	// to outlast both upgrades and release 2's part in between on a slow
	// machine (about 16 s).
	runningSeconds = 30
)

// firstReleaseInFlight are the first release's runs that had not finished
// when it was upgraded.
var firstReleaseInFlight = map[string]bool{runNew: true, runPending: true, runRunning: true}

// installFirstRelease installs the first release's CRDs: v1alpha1 only,
// stored as v1alpha1, no webhook.
func (r *rehearsal) installFirstRelease() {
	r.kubectl("apply", "--server-side", "-f", "testdata/first-release-crds.yaml")
	r.waitEstablished()
}

// createFirstReleaseObjects writes Tasks, and TaskRuns in every phase, as the
// first release and its users did: through v1alpha1, with the phases written
// to the status subresource and, for the runs that had one, the Pod the
// first release made. No controller runs: the first release is gone.
func (r *rehearsal) createFirstReleaseObjects() {
	t, ctx := r.t, context.Background()
	tasks := []*v1alpha1.Task{
		wrappers.V1alpha1Task(ns, "build").Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...").Obj(),
		wrappers.V1alpha1Task(ns, "flaky").Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...\nexit 3").Obj(),
		wrappers.V1alpha1Task(ns, "entrypoint").Step("run", "alpine:3", "").Obj(),
		wrappers.V1alpha1Task(ns, "sleepy").Step("wait", "alpine:3", fmt.Sprintf("sleep %d", runningSeconds)).Obj(),
	}
	tasks[0].Labels = map[string]string{"team": "shop"}
	runs := map[string]*v1alpha1.TaskRun{
		runNew:       wrappers.V1alpha1TaskRun(ns, runNew, "build").Obj(),
		runPending:   wrappers.V1alpha1TaskRun(ns, runPending, "entrypoint").Obj(),
		runRunning:   wrappers.V1alpha1TaskRun(ns, runRunning, "sleepy").Obj(),
		runSucceeded: wrappers.V1alpha1TaskRun(ns, runSucceeded, "build").Obj(),
		runFailed:    wrappers.V1alpha1TaskRun(ns, runFailed, "flaky").Obj(),
	}
	runs[runNew].Annotations = map[string]string{"note": "created just before the upgrade"}
	for _, task := range tasks {
		create(t, r.c, task)
	}
	for _, name := range slices.Sorted(maps.Keys(runs)) {
		create(t, r.c, runs[name])
	}

	// The failed run's Pod ran to its failure, the running run's Pod runs
	// its step through the upgrade.
	failed := r.runFirstReleasePod(runs[runFailed], failedPod, tasks[1].Spec.Steps, corev1.PodFailed)
	running := r.runFirstReleasePod(runs[runRunning], runningPod, tasks[3].Spec.Steps, corev1.PodRunning)
	r.firstReleasePods = map[string]string{failedPod: string(failed.UID), runningPod: string(running.UID)}

	now := metav1.NewTime(time.Now().Truncate(time.Second))
	setStatus := func(run *v1alpha1.TaskRun, status v1alpha1.TaskRunStatus) {
		run.Status = status
		if err := r.c.client.Status().Update(ctx, run); err != nil {
			t.Fatalf("writing the v1alpha1 status of TaskRun %s: %v", run.Name, err)
		}
	}
	setStatus(runs[runPending], v1alpha1.TaskRunStatus{Phase: v1alpha1.TaskRunPhasePending, StartTime: &now})
	setStatus(runs[runRunning], v1alpha1.TaskRunStatus{
		Phase: v1alpha1.TaskRunPhaseRunning, PodName: runningPod, StartTime: running.Status.StartTime,
	})
	setStatus(runs[runSucceeded], v1alpha1.TaskRunStatus{
		Phase: v1alpha1.TaskRunPhaseSucceeded, PodName: succeededPod,
		StartTime: ptr.To(metav1.NewTime(now.Add(-2 * time.Minute))), FinishTime: ptr.To(metav1.NewTime(now.Add(-time.Minute))),
	})
	setStatus(runs[runFailed], v1alpha1.TaskRunStatus{
		Phase: v1alpha1.TaskRunPhaseFailed, PodName: failedPod,
		StartTime: failed.Status.StartTime, FinishTime: &failed.Status.ContainerStatuses[0].State.Terminated.FinishedAt,
	})

	r.tasks, r.runs = map[string]*v1alpha1.Task{}, map[string]*v1alpha1.TaskRun{}
	for _, task := range tasks {
		r.tasks[task.Name] = r.getAlphaTask(task.Name)
	}
	for name := range runs {
		r.runs[name] = r.getAlphaRun(name)
	}
}

// runFirstReleasePod creates the Pod the first release would have made for
// run and waits until the local cluster's kubelet has brought it to phase.
// The first release named the Pod freely, owned it through v1alpha1, did not
// label it as later releases do, and named containers after steps.
func (r *rehearsal) runFirstReleasePod(run *v1alpha1.TaskRun, name string, steps []v1alpha1.Step, phase corev1.PodPhase) *corev1.Pod {
	containers := make([]corev1.Container, len(steps))
	for i, s := range steps {
		containers[i] = corev1.Container{Name: s.Name, Image: s.Image, Command: []string{"/bin/sh", "-c", s.Script}}
	}
	last := len(containers) - 1
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{"minitask.dev/run": run.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "TaskRun", Name: run.Name, UID: run.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:  corev1.RestartPolicyNever,
			InitContainers: containers[:last],
			Containers:     containers[last:],
		},
	}
	create(r.t, r.c, pod)
	waitFor(r.t, 30*time.Second, fmt.Sprintf("Pod %s to be %s", name, phase), func(ctx context.Context) error {
		if err := r.c.client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase != phase {
			return fmt.Errorf("phase %q", pod.Status.Phase)
		}
		return nil
	})
	return pod
}

// firstReleaseViews are the first release's objects as it last wrote them:
// it served v1alpha1 only.
func (r *rehearsal) firstReleaseViews() views {
	return views{alphaTasks: r.tasks, alphaRuns: r.runs}
}

// checkFirstReleaseRuns checks, once the current release runs, that the
// finished runs were left alone and that the others ran to their end: the
// running one through the Pod the first release made.
func (r *rehearsal) checkFirstReleaseRuns() {
	t := r.t
	got := waitFinished(t, r.c, 2*runningSeconds*time.Second, slices.Collect(maps.Keys(r.runs))...)
	want := map[string]string{
		runNew:       "True/Succeeded",
		runPending:   "True/Succeeded",
		runRunning:   "True/Succeeded",
		runSucceeded: "True/Succeeded",
		runFailed:    "False/Failed",
	}
	gotOutcomes := map[string]string{}
	for name := range want {
		gotOutcomes[name] = outcome(got[name])
	}
	if diff := cmp.Diff(want, gotOutcomes); diff != "" {
		t.Errorf("outcomes of the first release's runs (-want +got):\n%s", diff)
	}
	// The running run was tracked through the Pod the first release made,
	// whose only container the controller reports as it is named.
	steps := got[runRunning].Status.Steps
	if len(steps) != 1 || steps[0].Name != "wait" || steps[0].State != v1.StepTerminated || ptr.Deref(steps[0].ExitCode, -1) != 0 {
		t.Errorf("steps of TaskRun %s = %+v, want step wait Terminated with exit code 0", runRunning, steps)
	}
}
