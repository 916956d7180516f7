//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// conversionDataAnnotation is where conversion keeps, in a v1alpha1 view, the
// v1beta1 fields that v1alpha1 cannot express (API.md, "Conversion").
const conversionDataAnnotation = "minitask.dev/conversion-data"

// TestUpgradeFromFirstRelease rehearses the upgrade from the first release:
// objects in every phase written by it; the current CRDs and manager; the
// storage migration, checked in etcd itself, after which every v1alpha1
// view is converted from v1beta1 storage and compared with the first
// release's; then v1beta1 objects written to through v1alpha1.
func TestUpgradeFromFirstRelease(t *testing.T) {
	start := time.Now()
	r := &rehearsal{t: t, times: map[string]time.Duration{}, last: start}
	r.c = newCluster(t, "upgrade", withoutMinitask)
	r.lap("cluster")

	r.installFirstRelease()
	r.createFirstReleaseObjects()
	r.lap("first release")

	r.upgrade()
	r.lap("upgrade")
	r.checkFirstReleaseObjects()
	r.lap("first-release runs finished")
	r.checkStorageMigrated()
	r.lap("storage migration")
	r.checkFirstReleaseViewsUnchanged()

	r.writeV1beta1ObjectsThroughV1alpha1()
	r.lap("v1beta1 objects through v1alpha1")
	r.checkPods()
	r.checkStorageMigrated()
	r.report(time.Since(start))
}

// rehearsal carries what the steps of the upgrade rehearsal share.
type rehearsal struct {
	t *testing.T
	c *cluster

	// tasks and runs are the first release's objects as it last wrote them,
	// read through v1alpha1 before the upgrade.
	tasks map[string]*v1alpha1.Task
	runs  map[string]*v1alpha1.TaskRun
	// firstReleasePods are the UIDs of the Pods the first release made.
	firstReleasePods map[string]string
	// betaTasks and betaRuns are the objects created through v1beta1 after
	// the upgrade, as last read through v1beta1.
	betaTasks map[string]*v1beta1.Task
	betaRuns  map[string]*v1beta1.TaskRun
	// pods is how many Pods the Pod check found.
	pods int
	// stored counts the minitask keys in etcd by apiVersion, at the last check.
	stored map[string]int

	times map[string]time.Duration
	order []string
	last  time.Time
}

// The first release's runs, one per phase, named after it.
const (
	runNew       = "new"       // phase "": not yet seen by any controller
	runPending   = "pending"   // started, no Pod yet
	runRunning   = "running"   // its Pod runs a step through the upgrade
	runSucceeded = "succeeded" // finished; its Pod is long gone
	runFailed    = "failed"    // finished; its failed Pod is still there

	// The Pods of the first release had names of their own: the current
	// controller must find them through status.podName, not by its own
	// naming (RUN-pod).
	runningPod = "running-4x9kq"
	failedPod  = "failed-7c2mz"
	// runningSeconds is how long the running run's step sleeps: long enough
	// to outlast the upgrade on a slow machine, which takes about 5 s.
	runningSeconds = 15
)

// lap records the time since the last lap as the time of step name.
func (r *rehearsal) lap(name string) {
	now := time.Now()
	r.times[name] += now.Sub(r.last)
	if !slices.Contains(r.order, name) {
		r.order = append(r.order, name)
	}
	r.last = now
}

func (r *rehearsal) kubectl(args ...string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.c.runKubectl(ctx, args...)
	if err != nil {
		r.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// installFirstRelease installs the first release's CRDs: v1alpha1 only,
// stored as v1alpha1, no webhook.
func (r *rehearsal) installFirstRelease() {
	r.kubectl("apply", "--server-side", "-f", "testdata/first-release-crds.yaml")
	r.kubectl("wait", "--for=condition=Established", "--timeout=30s", "crd/tasks.minitask.dev", "crd/taskruns.minitask.dev")
}

// createFirstReleaseObjects writes Tasks, and TaskRuns in every phase, as the
// first release and its users did: through v1alpha1, with the phases written
// to the status subresource and, for the runs that had one, the Pod the
// first release made. No controller runs: the first release is gone.
func (r *rehearsal) createFirstReleaseObjects() {
	t, ctx := r.t, context.Background()
	alphaStep := func(name, script string) v1alpha1.Step {
		return v1alpha1.Step{Name: name, Image: "alpine:3", Script: script}
	}
	tasks := []*v1alpha1.Task{
		alphaTask("build", alphaStep("compile", "go build ./..."), alphaStep("test", "go test ./...")),
		alphaTask("flaky", alphaStep("compile", "go build ./..."), alphaStep("test", "go test ./...\nexit 3")),
		alphaTask("entrypoint", v1alpha1.Step{Name: "run", Image: "alpine:3"}),
		alphaTask("sleepy", alphaStep("wait", fmt.Sprintf("sleep %d", runningSeconds))),
	}
	tasks[0].Labels = map[string]string{"team": "shop"}
	runs := map[string]*v1alpha1.TaskRun{
		runNew:       alphaRun(runNew, "build"),
		runPending:   alphaRun(runPending, "entrypoint"),
		runRunning:   alphaRun(runRunning, "sleepy"),
		runSucceeded: alphaRun(runSucceeded, "build"),
		runFailed:    alphaRun(runFailed, "flaky"),
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
		Phase: v1alpha1.TaskRunPhaseSucceeded, PodName: podName(runSucceeded),
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
// label it as the current release does, and named containers after steps.
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

// upgrade installs the current CRDs and webhook configuration, and starts
// the current manager. In between, with no webhook serving yet, every
// object must still read through v1alpha1 exactly as the first release
// wrote it: the new CRDs' v1alpha1 schema prunes nothing the first release
// stored.
func (r *rehearsal) upgrade() {
	t := r.t
	r.kubectl("apply", "--server-side", "-f", r.c.env["MINITASK_MANIFESTS"])
	r.kubectl("wait", "--for=condition=Established", "--timeout=30s", "crd/tasks.minitask.dev", "crd/taskruns.minitask.dev")

	// Nothing has written these objects since they were read: they are
	// equal to the last byte, resourceVersion and managedFields included.
	for name, want := range r.tasks {
		if diff := cmp.Diff(want, r.getAlphaTask(name)); diff != "" {
			t.Errorf("v1alpha1 Task %s after installing the current CRDs (-before +after):\n%s", name, diff)
		}
	}
	for name, want := range r.runs {
		if diff := cmp.Diff(want, r.getAlphaRun(name)); diff != "" {
			t.Errorf("v1alpha1 TaskRun %s after installing the current CRDs (-before +after):\n%s", name, diff)
		}
	}
	// The rehearsal proves something only if the manager meets a Pod that
	// still runs.
	pod := &corev1.Pod{}
	if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: runningPod}, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("Pod %s is %s before the manager starts; raise runningSeconds (%d)", runningPod, pod.Status.Phase, runningSeconds)
	}
	startManager(t, r.c)
}

// checkFirstReleaseObjects checks that every first-release object reads in
// both versions, that the finished runs are left alone, and that the others
// run to their end: the running one through the Pod it already has.
func (r *rehearsal) checkFirstReleaseObjects() {
	t, ctx := r.t, context.Background()
	for name := range r.tasks {
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.Task{}); err != nil {
			t.Errorf("reading Task %s through v1beta1: %v", name, err)
		}
		r.getAlphaTask(name)
	}
	for name := range r.runs {
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.TaskRun{}); err != nil {
			t.Errorf("reading TaskRun %s through v1beta1: %v", name, err)
		}
		r.getAlphaRun(name)
	}

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
	// whose only container the current controller reports as it is named.
	steps := got[runRunning].Status.Steps
	if len(steps) != 1 || steps[0].Name != "wait" || steps[0].State != v1beta1.StepTerminated || ptr.Deref(steps[0].ExitCode, -1) != 0 {
		t.Errorf("steps of TaskRun %s = %+v, want step wait Terminated with exit code 0", runRunning, steps)
	}
}

// checkFirstReleaseViewsUnchanged compares each first-release object's
// v1alpha1 view, now converted from v1beta1 storage, with the view before
// the upgrade. resourceVersion and managedFields change with every write,
// the migration's included, and are left out. The Tasks and the finished
// runs must be otherwise identical. The runs that were going on at the
// upgrade legitimately progress: their spec and metadata must not change,
// but for the conversion annotation, which holds the v1beta1 status (steps,
// the condition's message) that v1alpha1 cannot show; their status must
// keep what the first release recorded (podName, startTime), with only the
// phase, the finishTime and, for runs that had none, the podName and
// startTime that the current controller added.
func (r *rehearsal) checkFirstReleaseViewsUnchanged() {
	t := r.t
	ignoreWrites := cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "ManagedFields")
	for name, before := range r.tasks {
		if diff := cmp.Diff(before, r.getAlphaTask(name), ignoreWrites); diff != "" {
			t.Errorf("v1alpha1 view of Task %s (-before the upgrade +now):\n%s", name, diff)
		}
	}
	for name, before := range r.runs {
		after := r.getAlphaRun(name)
		want := before.DeepCopy()
		switch name {
		case runSucceeded, runFailed:
		default:
			delete(after.Annotations, conversionDataAnnotation)
			if len(after.Annotations) == 0 {
				after.Annotations = nil
			}
			if after.Status.FinishTime == nil || after.Status.StartTime == nil || after.Status.FinishTime.Before(after.Status.StartTime) {
				t.Errorf("TaskRun %s: startTime %v, finishTime %v: want both, in order", name, after.Status.StartTime, after.Status.FinishTime)
			}
			want.Status.Phase, want.Status.FinishTime = v1alpha1.TaskRunPhaseSucceeded, after.Status.FinishTime
			if want.Status.PodName == "" {
				want.Status.PodName = podName(name)
			}
			if want.Status.StartTime == nil {
				want.Status.StartTime = after.Status.StartTime
			}
		}
		if diff := cmp.Diff(want, after, ignoreWrites); diff != "" {
			t.Errorf("v1alpha1 view of TaskRun %s (-want +got):\n%s", name, diff)
		}
	}
}

// The objects created through v1beta1 after the upgrade.
const (
	runAlice = "greet-alice" // params, a timeout; succeeds
	runBob   = "greet-bob"   // cancelled at creation; never gets a Pod
	runCarol = "greet-carol" // runs for long; a v1alpha1 writer fails it
)

// writeV1beta1ObjectsThroughV1alpha1 creates v1beta1 objects with what
// v1alpha1 cannot express (params, a timeout, a cancel request, the steps'
// states), then writes to them through v1alpha1: kubectl applies a label to
// each, and a v1alpha1 client fails a running run through its status. The
// v1beta1 fields must survive both.
func (r *rehearsal) writeV1beta1ObjectsThroughV1alpha1() {
	t := r.t
	task := newTask("greet",
		step("say", `echo "$(params.greeting), $(params.name)!"`),
		step("wait", "sleep $(params.pause)"))
	task.Spec.Description = "Greets someone"
	task.Spec.Params = []v1beta1.ParamSpec{
		{Name: "greeting", Description: "What to say", Default: ptr.To("hello")},
		{Name: "name", Description: "Whom to greet"},
		{Name: "pause", Default: ptr.To("1")},
	}
	create(t, r.c, task,
		newRun(runAlice, "greet").param("name", "alice").param("greeting", "hi").timeout(10*time.Minute).obj(),
		newRun(runBob, "greet").param("name", "bob").param("pause", "600").timeout(5*time.Minute).cancelled().obj(),
		newRun(runCarol, "greet").param("name", "carol").param("pause", "600").timeout(10*time.Minute).obj())
	waitFinished(t, r.c, time.Minute, runAlice, runBob)
	waitFor(t, time.Minute, fmt.Sprintf("TaskRun %s to run its step wait", runCarol), func(ctx context.Context) error {
		run := &v1beta1.TaskRun{}
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runCarol}, run); err != nil {
			return err
		}
		if s := run.Status.Steps; len(s) != 2 || s[1].State != v1beta1.StepRunning {
			return fmt.Errorf("%s, steps %+v", outcome(run), s)
		}
		return nil
	})
	r.betaTasks = map[string]*v1beta1.Task{"greet": r.getBetaTask("greet")}
	r.betaRuns = map[string]*v1beta1.TaskRun{}
	for _, name := range []string{runAlice, runBob, runCarol} {
		r.betaRuns[name] = r.getBetaRun(name)
	}

	r.applyLabelThroughV1alpha1()
	carolBefore, finishTime := r.failThroughV1alpha1(runCarol)

	const label = "upgraded"
	for name, before := range r.betaTasks {
		after := r.getBetaTask(name)
		if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
			t.Errorf("v1beta1 spec of Task %s after kubectl applied a label through v1alpha1 (-before +after):\n%s", name, diff)
		}
		if after.Labels[label] != "true" {
			t.Errorf("Task %s has labels %v, want the one kubectl applied", name, after.Labels)
		}
		if _, ok := after.Annotations[conversionDataAnnotation]; ok {
			t.Errorf("the v1beta1 view of Task %s has annotation %s", name, conversionDataAnnotation)
		}
	}
	for name, before := range r.betaRuns {
		after := r.getBetaRun(name)
		if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
			t.Errorf("v1beta1 spec of TaskRun %s after writes through v1alpha1 (-before +after):\n%s", name, diff)
		}
		if after.Labels[label] != "true" {
			t.Errorf("TaskRun %s has labels %v, want the one kubectl applied", name, after.Labels)
		}
		if _, ok := after.Annotations[conversionDataAnnotation]; ok {
			t.Errorf("the v1beta1 view of TaskRun %s has annotation %s", name, conversionDataAnnotation)
		}
		want := before.Status
		if name == runCarol {
			// The v1alpha1 writer's phase wins and becomes False/Failed,
			// its finishTime the completionTime; the steps it cannot see
			// are kept as they were when it wrote.
			want = carolBefore.Status
			want.Conditions = []metav1.Condition{{
				Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
				Reason: string(v1beta1.ReasonFailed), LastTransitionTime: finishTime,
			}}
			want.CompletionTime = &finishTime
		}
		if diff := cmp.Diff(want, after.Status); diff != "" {
			t.Errorf("v1beta1 status of TaskRun %s after writes through v1alpha1 (-want +got):\n%s", name, diff)
		}
		r.betaRuns[name] = after
	}
}

// applyLabelThroughV1alpha1 applies, with kubectl, a v1alpha1 manifest of
// each v1beta1 object that adds a label: what a user of the first release
// would do with the manifests they kept.
func (r *rehearsal) applyLabelThroughV1alpha1() {
	t := r.t
	var docs []string
	manifest := func(kind string, meta metav1.ObjectMeta, spec any) {
		labels := maps.Clone(meta.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels["upgraded"] = "true"
		b, err := yaml.Marshal(map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
			"metadata": map[string]any{"name": meta.Name, "namespace": meta.Namespace, "labels": labels},
			"spec":     spec,
		})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for name := range r.betaTasks {
		task := r.getAlphaTask(name)
		manifest("Task", task.ObjectMeta, task.Spec)
	}
	for _, name := range slices.Sorted(maps.Keys(r.betaRuns)) {
		run := r.getAlphaRun(name)
		manifest("TaskRun", run.ObjectMeta, run.Spec)
	}
	path := filepath.Join(t.TempDir(), "v1alpha1.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r.kubectl("apply", "-f", path)
}

// failThroughV1alpha1 fails a running run as a v1alpha1 client would: it
// writes phase Failed and a finishTime to the v1alpha1 status. It returns
// the v1beta1 view of the run that the write was based on, and the
// finishTime written.
func (r *rehearsal) failThroughV1alpha1(name string) (*v1beta1.TaskRun, metav1.Time) {
	t, ctx := r.t, context.Background()
	for range 10 {
		// The controller may write the run in between; the status update
		// carries the resourceVersion, so a write based on an older view
		// fails and is retried.
		beta, alpha := r.getBetaRun(name), r.getAlphaRun(name)
		if beta.ResourceVersion != alpha.ResourceVersion {
			continue
		}
		finishTime := metav1.NewTime(time.Now().Truncate(time.Second))
		alpha.Status.Phase, alpha.Status.FinishTime = v1alpha1.TaskRunPhaseFailed, &finishTime
		err := r.c.client.Status().Update(ctx, alpha)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("writing phase Failed to TaskRun %s through v1alpha1: %v", name, err)
		}
		return beta, finishTime
	}
	t.Fatalf("writing phase Failed to TaskRun %s through v1alpha1: it kept changing", name)
	return nil, metav1.Time{}
}

// checkPods checks that every run has the one Pod it should: the Pods the
// first release made are kept and tracked, the finished runs get none, the
// others one each, named by the current release's rule.
func (r *rehearsal) checkPods() {
	t, ctx := r.t, context.Background()
	byRun, err := podsByRun(ctx, r.c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	uids := map[string]string{}
	for run, pods := range byRun {
		got[run] = podNames(pods)
		for _, pod := range pods {
			uids[pod.Name] = string(pod.UID)
		}
	}
	r.pods = len(uids)
	want := map[string][]string{
		runNew:     {podName(runNew)},
		runPending: {podName(runPending)},
		runRunning: {runningPod},
		runFailed:  {failedPod},
		runAlice:   {podName(runAlice)},
		runCarol:   {podName(runCarol)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pods by the TaskRun that controls them (-want +got):\n%s", diff)
	}
	for name, uid := range r.firstReleasePods {
		if uids[name] != uid {
			t.Errorf("Pod %s of the first release has UID %q, want %q: it was replaced", name, uids[name], uid)
		}
	}
	// The params reached the Pod.
	for _, pod := range byRun[runAlice] {
		if cmd := pod.Spec.InitContainers[0].Command; !slices.Contains(cmd, `echo "hi, alice!"`) {
			t.Errorf("Pod %s runs %q, want the params substituted", pod.Name, cmd)
		}
	}
}

// checkStorageMigrated waits until the manager's storage migration has
// trimmed both CRDs' storedVersions to [v1beta1], then reads etcd itself:
// every minitask object must be stored as v1beta1.
func (r *rehearsal) checkStorageMigrated() {
	t := r.t
	for _, name := range []string{"tasks.minitask.dev", "taskruns.minitask.dev"} {
		waitFor(t, time.Minute, "the storage migration of "+name, func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := r.c.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			if !slices.Equal(crd.Status.StoredVersions, []string{"v1beta1"}) {
				return fmt.Errorf("storedVersions %v", crd.Status.StoredVersions)
			}
			return nil
		})
	}

	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{r.c.env["MINITASK_ETCD_ENDPOINT"]}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to etcd: %v", err)
	}
	defer etcd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := etcd.Get(ctx, "/registry/minitask.dev/", clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("reading etcd: %v", err)
	}
	r.stored = map[string]int{}
	for _, kv := range resp.Kvs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("decoding etcd key %s: %v", kv.Key, err)
		}
		r.stored[obj.APIVersion]++
		if obj.APIVersion != "minitask.dev/v1beta1" {
			t.Errorf("etcd key %s is stored as %s, want minitask.dev/v1beta1", kv.Key, obj.APIVersion)
		}
	}
	objects := len(r.tasks) + len(r.runs) + len(r.betaTasks) + len(r.betaRuns)
	if diff := cmp.Diff(map[string]int{"minitask.dev/v1beta1": objects}, r.stored); diff != "" {
		t.Errorf("minitask objects in etcd by the apiVersion they are stored in (-want +got):\n%s", diff)
	}
}

// report writes what the rehearsal checked to the test log.
func (r *rehearsal) report(total time.Duration) {
	phases := map[string]int{}
	for _, run := range r.runs {
		phases[fmt.Sprintf("%q", run.Status.Phase)]++
	}
	var times []string
	for _, name := range r.order {
		times = append(times, fmt.Sprintf("%s %.1fs", name, r.times[name].Seconds()))
	}
	r.t.Logf(`upgrade rehearsal report:
  first release (v1alpha1, stored as v1alpha1): %d Tasks, %d TaskRuns by phase %v, %d Pods
  after the upgrade (v1beta1): %d Task, %d TaskRuns (params, timeout, cancel), written to through v1alpha1
  checked: %d objects, each read through v1alpha1 and v1beta1; %d Pods, one per run that needs one
  etcd: %v; storedVersions of both CRDs: [v1beta1]
  time: %s; total %.1fs`,
		len(r.tasks), len(r.runs), phases, len(r.firstReleasePods),
		len(r.betaTasks), len(r.betaRuns),
		len(r.tasks)+len(r.runs)+len(r.betaTasks)+len(r.betaRuns), r.pods,
		r.stored, strings.Join(times, ", "), total.Seconds())
}

func alphaTask(name string, steps ...v1alpha1.Step) *v1alpha1.Task {
	return &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.TaskSpec{Steps: steps}}
}

func alphaRun(name, task string) *v1alpha1.TaskRun {
	return &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.TaskRunSpec{TaskRef: task}}
}

// podName is the name the current controller gives a run's Pod (short names).
func podName(run string) string { return run + "-pod" }

func (r *rehearsal) getAlphaTask(name string) *v1alpha1.Task {
	r.t.Helper()
	obj := &v1alpha1.Task{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getAlphaRun(name string) *v1alpha1.TaskRun {
	r.t.Helper()
	obj := &v1alpha1.TaskRun{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getBetaTask(name string) *v1beta1.Task {
	r.t.Helper()
	obj := &v1beta1.Task{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) getBetaRun(name string) *v1beta1.TaskRun {
	r.t.Helper()
	obj := &v1beta1.TaskRun{}
	r.get(name, obj)
	return obj
}

func (r *rehearsal) get(name string, obj client.Object) {
	r.t.Helper()
	if err := r.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		r.t.Fatalf("reading %T %s: %v", obj, name, err)
	}
}
