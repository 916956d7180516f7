//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	minitaskv1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestRollbackToRelease6 rehearses release 6 → now (release 7) → release 6
// → now, as docs/upgrading.md tells an operator to go, with runs in flight
// at every step:
//
//   - Under release 6 (as shipped), objects are written through all three
//     versions, with runs in flight and a v1 run no controller saw
//     (createRelease5Objects). The upgrade to release 7 must finish them
//     once each, every object reading as before (checkEverythingKept).
//   - Under release 7, what only release 7 runs is written through v1 in a
//     namespace of its own (createRelease7Objects): a Task with a sidecar, a
//     stepTemplate, a step's securityContext and pull policy, a run of it
//     and an inline taskSpec run, each in flight (chained Pods, as release 7
//     builds by default, their specs pinned in status.taskSpec), and one of
//     each that no controller saw.
//   - Rolled back to release 6, its API server takes release 6's CRDs; the
//     runs in flight finish once through their Pods; the runs not started
//     wait Pending, naming release 7, with no Pod; release 6 refuses a new
//     write of a release 7 field; and every release 7 field reads as
//     written, through v1 and, converted back, through v1beta1 and v1alpha1
//     (release 6 keeps them in its schema and its stash).
//   - Rolled forward, release 7 runs the waiting runs from what they hold,
//     and every field still reads as written.
func TestRollbackToRelease6(t *testing.T) {
	t.Parallel()
	r := newV1Rehearsal(t, "rollback-6", release6)
	// The runs in flight must outlast each step, not the build of release
	// 6's manager: it is built before they start.
	release6.build(t)
	r.installRelease(release6, views{}, nil)
	r.lap("install release 6")
	before := r.createRelease5Objects()
	r.checkV1Views("under release 6")
	r.lap("release 6")

	r.upgradeToCurrent(before, release5InFlight, r.runningPods(r5Running, r5aRunning, v1Running)...)
	r.checkRunsFinished(release5Outcomes, 2*release5RunningSeconds*time.Second, "of release 6, after the upgrade to release 7")
	r.checkRunPods(r5Running, r5aRunning, v1Running, v1New)
	r.checkEverythingKept(before, release5InFlight, "after the upgrade to release 7")
	r.lap("upgrade to release 7")

	r7 := r.createRelease7Objects()
	r.lap("release 7's objects")

	all := r.readViews()
	r.installRelease(release6, all, nil)
	r.checkRelease7Kept(r7, "after installing release 6's CRDs")
	r.checkRelease7RunsFinished(release7InFlight, "under release 6, after the rollback")
	r.checkRelease7Waits()
	r.checkRelease7Refused()
	r.checkRelease7Kept(r7, "after the rollback to release 6")
	r.checkEverythingKept(all, nil, "after the rollback to release 6")
	r.lap("rollback to release 6")

	r.upgradeToCurrent(r.readViews(), nil)
	r.checkRelease7RunsFinished(release7Unstarted, "after the roll forward to release 7")
	r.checkRelease7Ran()
	r.checkRelease7Kept(r7, "after the roll forward to release 7")
	r.lap("roll forward to release 7")
	r.report("release 6 → 7 → 6 → 7")
}

// What only release 7 runs, in TestRollbackToRelease6: written through v1
// in a namespace of their own, so that the rehearsal's checks of every
// object in ns, which compare v1 with v1beta1 views, leave them to the
// checks here.
const (
	r7NS            = "release7"
	r7Task          = "templated"         // sidecars, stepTemplate, a step's securityContext and pull policy
	r7TaskRunning   = "templated-running" // runs through the rollback
	r7InlineRunning = "inline-running"    // spec.taskSpec; runs through the rollback
	r7TaskNew       = "templated-new"     // created once release 7's controller stopped
	r7InlineNew     = "inline-new"        // spec.taskSpec; created once release 7's controller stopped
	// r7Env is what the Task's stepTemplate sets in every step.
	r7Env = "GREETING"
)

// release7InFlight and release7Unstarted are release 7's runs in flight at
// the rollback, and those no controller saw before it.
var (
	release7InFlight  = []string{r7TaskRunning, r7InlineRunning}
	release7Unstarted = []string{r7TaskNew, r7InlineNew}
)

// release7Fields is what a release 7 object holds that release 6 only
// keeps, as v1 JSON: a Task's spec, a run's spec and status.taskSpec. A
// rollback and a roll forward must give each back as it was.
type release7Fields map[string]string

// templatedTask is the Task with what release 7 runs of a Task's spec.
func templatedTask() *minitaskv1.Task {
	return &minitaskv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: r7NS, Name: r7Task},
		Spec: minitaskv1.TaskSpec{
			Params: []minitaskv1.ParamSpec{{Name: "pause", Default: minitaskv1.NewStringValue("1")}},
			// A service beside the steps: the run in flight's Pod has it as
			// a native sidecar through the rollback, which release 6 reads.
			Sidecars: []minitaskv1.Sidecar{{Name: "db", Image: "postgres:17"}},
			StepTemplate: &minitaskv1.StepTemplate{
				Env:             []corev1.EnvVar{{Name: r7Env, Value: "hello from the template"}},
				ImagePullPolicy: minitaskv1.PullIfNotPresent,
			},
			Steps: []minitaskv1.Step{
				{Name: "say", Image: "alpine:3", Script: `echo "$` + r7Env + `"`, ImagePullPolicy: minitaskv1.PullAlways},
				{Name: "wait", Image: "alpine:3", Script: "sleep $(params.pause)",
					SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SETFCAP"}}}},
			},
		},
	}
}

// inlineRun is a run that gives its Task's spec inline.
func inlineRun(name string, pause int) *minitaskv1.TaskRun {
	return &minitaskv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: r7NS, Name: name},
		Spec: minitaskv1.TaskRunSpec{TaskSpec: &minitaskv1.TaskSpec{
			Steps: []minitaskv1.Step{
				{Name: "say", Image: "alpine:3", Script: "echo inline"},
				{Name: "wait", Image: "alpine:3", Script: fmt.Sprintf("sleep %d", pause)},
			},
		}},
	}
}

// templatedRun is a run of the templated Task.
func templatedRun(name string, pause int) *minitaskv1.TaskRun {
	return &minitaskv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: r7NS, Name: name},
		Spec: minitaskv1.TaskRunSpec{
			TaskRef: minitaskv1.TaskRef{Name: r7Task},
			Params:  []minitaskv1.Param{{Name: "pause", Value: *minitaskv1.NewStringValue(fmt.Sprint(pause))}},
		},
	}
}

// createRelease7Objects writes release 7's objects (see above), waits for
// the runs in flight to run and to have their spec pinned, then stops the
// controller and writes the runs no controller sees before release 6's.
// It returns what each holds of release 7's fields.
func (r *v1Rehearsal) createRelease7Objects() release7Fields {
	create(r.t, r.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r7NS}}, templatedTask(),
		templatedRun(r7TaskRunning, release5RunningSeconds), inlineRun(r7InlineRunning, release5RunningSeconds))
	waitFor(r.t, time.Minute, "release 7's runs in flight to run, their specs pinned", func(ctx context.Context) error {
		for _, name := range release7InFlight {
			run, err := r.r7Run(ctx, name)
			if err != nil {
				return err
			}
			if c := runstate.Succeeded(run); c == nil || c.Reason != string(minitaskv1.ReasonRunning) || run.Status.TaskSpec == nil {
				return fmt.Errorf("TaskRun %s is %s, status.taskSpec set: %t", name, outcome(run), run.Status.TaskSpec != nil)
			}
		}
		return nil
	})
	for _, name := range release7InFlight {
		if pods := r.r7Pods(name); len(pods) != 1 || !runstate.Chained(&pods[0]) {
			r.t.Fatalf("TaskRun %s has Pods %v, want one chained Pod (release 7's default)", name, podNames(pods))
		}
	}
	r.stopController()
	create(r.t, r.c, templatedRun(r7TaskNew, 1), inlineRun(r7InlineNew, 1))
	return r.release7Fields(context.Background())
}

// release7Fields reads what each release 7 object holds of release 7's
// fields through v1.
func (r *v1Rehearsal) release7Fields(ctx context.Context) release7Fields {
	r.t.Helper()
	fields := release7Fields{}
	task := &minitaskv1.Task{}
	if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: r7NS, Name: r7Task}, task); err != nil {
		r.t.Fatal(err)
	}
	fields["Task/"+r7Task] = mustJSONText(r.t, task.Spec)
	for _, name := range slices.Concat(release7InFlight, release7Unstarted) {
		run, err := r.r7Run(ctx, name)
		if err != nil {
			r.t.Fatal(err)
		}
		fields["TaskRun/"+name] = mustJSONText(r.t, map[string]any{"spec": run.Spec, "status.taskSpec": run.Status.TaskSpec})
	}
	return fields
}

// checkRelease7Kept checks that every release 7 object holds what it held
// (want): through v1 as the API server stores it, and through v1beta1 and
// v1alpha1, each converted back to v1 by this release's conversion, as a
// client of those versions that writes its object back would keep it. A
// run's pinned spec may only have been set since (a run want saw unpinned
// that ran since).
func (r *v1Rehearsal) checkRelease7Kept(want release7Fields, when string) {
	r.t.Helper()
	ctx := context.Background()
	got := r.release7Fields(ctx)
	for key, text := range got {
		if want[key] != text && !pinnedSince(want[key], text) {
			r.t.Errorf("%s, %s through v1 holds (-before +now):\n%s", when, key, cmp.Diff(want[key], text))
		}
	}
	throughSpokes := release7Fields{}
	beta, alpha := &v1beta1.Task{}, &v1alpha1.Task{}
	for _, obj := range []client.Object{beta, alpha} {
		if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: r7NS, Name: r7Task}, obj); err != nil {
			r.t.Fatal(err)
		}
	}
	fromBeta, fromAlpha := &minitaskv1.Task{}, &minitaskv1.Task{}
	if err := conversion.ConvertBetaTaskToHub(ctx, beta, fromBeta); err != nil {
		r.t.Fatal(err)
	}
	if err := conversion.ConvertTaskToHub(ctx, alpha, fromAlpha); err != nil {
		r.t.Fatal(err)
	}
	throughSpokes["v1beta1 Task/"+r7Task] = mustJSONText(r.t, fromBeta.Spec)
	throughSpokes["v1alpha1 Task/"+r7Task] = mustJSONText(r.t, fromAlpha.Spec)
	for _, name := range slices.Concat(release7InFlight, release7Unstarted) {
		betaRun, alphaRun := &v1beta1.TaskRun{}, &v1alpha1.TaskRun{}
		for _, obj := range []client.Object{betaRun, alphaRun} {
			if err := r.c.client.Get(ctx, client.ObjectKey{Namespace: r7NS, Name: name}, obj); err != nil {
				r.t.Fatal(err)
			}
		}
		fromBeta, fromAlpha := &minitaskv1.TaskRun{}, &minitaskv1.TaskRun{}
		if err := conversion.ConvertBetaTaskRunToHub(ctx, betaRun, fromBeta); err != nil {
			r.t.Fatal(err)
		}
		if err := conversion.ConvertTaskRunToHub(ctx, alphaRun, fromAlpha); err != nil {
			r.t.Fatal(err)
		}
		for version, run := range map[string]*minitaskv1.TaskRun{"v1beta1": fromBeta, "v1alpha1": fromAlpha} {
			throughSpokes[version+" TaskRun/"+name] = mustJSONText(r.t, map[string]any{"spec": run.Spec, "status.taskSpec": run.Status.TaskSpec})
		}
	}
	for key, text := range throughSpokes {
		_, object, _ := strings.Cut(key, " ")
		if got[object] != text {
			r.t.Errorf("%s, %s converted back to v1 is not what v1 reads (-v1 +converted):\n%s", when, key, cmp.Diff(got[object], text))
		}
	}
}

// pinnedSince reports whether now is before with status.taskSpec set
// since: a run that had not started.
func pinnedSince(before, now string) bool {
	var b, n map[string]json.RawMessage
	if json.Unmarshal([]byte(before), &b) != nil || json.Unmarshal([]byte(now), &n) != nil {
		return false
	}
	return string(b["status.taskSpec"]) == "null" && string(n["status.taskSpec"]) != "null" && string(b["spec"]) == string(n["spec"])
}

// checkRelease7RunsFinished waits for the named runs to succeed, each
// through one Pod.
func (r *v1Rehearsal) checkRelease7RunsFinished(names []string, when string) {
	r.t.Helper()
	waitFor(r.t, 2*release5RunningSeconds*time.Second, "release 7's runs to succeed "+when, func(ctx context.Context) error {
		for _, name := range names {
			run, err := r.r7Run(ctx, name)
			if err != nil {
				return err
			}
			if got := outcome(run); got != "True/Succeeded" {
				return fmt.Errorf("TaskRun %s is %s: %s", name, got, conditionMessage(run))
			}
		}
		return nil
	})
	for _, name := range names {
		if pods := r.r7Pods(name); len(pods) != 1 {
			r.t.Errorf("%s, TaskRun %s has Pods %v, want one", when, name, podNames(pods))
		}
	}
}

// checkRelease7Waits checks that release 6 leaves the runs it cannot run
// Pending, naming release 7, with no Pod.
func (r *v1Rehearsal) checkRelease7Waits() {
	r.t.Helper()
	waitFor(r.t, time.Minute, "release 6 to leave release 7's runs Pending", func(ctx context.Context) error {
		for _, name := range release7Unstarted {
			run, err := r.r7Run(ctx, name)
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(run.Status.Conditions, minitaskv1.ConditionSucceeded)
			if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != string(minitaskv1.ReasonPending) ||
				!strings.Contains(cond.Message, "which needs minitask release 7") {
				return fmt.Errorf("TaskRun %s's condition is %+v", name, cond)
			}
		}
		return nil
	})
	for _, name := range release7Unstarted {
		if pods := r.r7Pods(name); len(pods) != 0 {
			r.t.Errorf("release 6 made Pods %v for TaskRun %s/%s, which only release 7 runs", podNames(pods), r7NS, name)
		}
	}
}

// checkRelease7Refused checks that release 6 refuses a new write of what
// only release 7 runs, naming the field and release 7, and creates nothing.
func (r *v1Rehearsal) checkRelease7Refused() {
	r.t.Helper()
	task := templatedTask()
	task.Name = "templated-again"
	run := inlineRun("inline-again", 1)
	for _, obj := range []client.Object{task, run} {
		err := r.c.client.Create(context.Background(), obj)
		if err == nil || !strings.Contains(err.Error(), "needs minitask release 7") {
			r.t.Errorf("release 6 took %T %s, which only release 7 runs: %v", obj, obj.GetName(), err)
		}
	}
}

// checkRelease7Ran checks what release 7 made of the runs that waited: the
// templated run's Pod has the template's env in every step and the step's
// own pull policy over the template's, and the inline run's spec is pinned.
func (r *v1Rehearsal) checkRelease7Ran() {
	r.t.Helper()
	pods := r.r7Pods(r7TaskNew)
	if len(pods) != 1 {
		r.t.Fatalf("TaskRun %s has Pods %v, want one", r7TaskNew, podNames(pods))
	}
	got := map[string]string{}
	for _, c := range pods[0].Spec.InitContainers {
		if runstate.IsNativeSidecar(c) {
			got[c.Name] = "native sidecar"
		}
	}
	for _, c := range slices.Concat(pods[0].Spec.InitContainers, pods[0].Spec.Containers) {
		if !strings.HasPrefix(c.Name, runstate.StepContainerPrefix) {
			continue
		}
		env := ""
		for _, e := range c.Env {
			if e.Name == r7Env {
				env = e.Value
			}
		}
		got[c.Name] = fmt.Sprintf("%s, %s=%q", c.ImagePullPolicy, r7Env, env)
	}
	want := map[string]string{
		runstate.SidecarContainerPrefix + "db": "native sidecar",
		runstate.StepContainerPrefix + "say":   `Always, GREETING="hello from the template"`,
		runstate.StepContainerPrefix + "wait":  `IfNotPresent, GREETING="hello from the template"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Errorf("the containers of TaskRun %s's Pod (-want +got):\n%s", r7TaskNew, diff)
	}
	run, err := r.r7Run(context.Background(), r7InlineNew)
	if err != nil {
		r.t.Fatal(err)
	}
	if run.Status.TaskSpec == nil || !cmp.Equal(run.Spec.TaskSpec, run.Status.TaskSpec) {
		r.t.Errorf("TaskRun %s's status.taskSpec is %s, want its spec.taskSpec", r7InlineNew, mustJSONText(r.t, run.Status.TaskSpec))
	}
	if c := pods[0].Spec.Containers; len(c) == 0 || c[len(c)-1].SecurityContext == nil ||
		!slices.Equal(ptr.Deref(c[len(c)-1].SecurityContext.Capabilities, corev1.Capabilities{}).Add, []corev1.Capability{"SETFCAP"}) {
		r.t.Errorf("TaskRun %s's last step's container does not add SETFCAP: %+v", r7TaskNew, c)
	}
}

func (r *v1Rehearsal) r7Run(ctx context.Context, name string) (*minitaskv1.TaskRun, error) {
	run := &minitaskv1.TaskRun{}
	return run, r.c.client.Get(ctx, client.ObjectKey{Namespace: r7NS, Name: name}, run)
}

// r7Pods are the Pods of release 7's run name.
func (r *v1Rehearsal) r7Pods(name string) []corev1.Pod {
	var pods corev1.PodList
	if err := r.c.client.List(context.Background(), &pods, client.InNamespace(r7NS)); err != nil {
		r.t.Fatal(err)
	}
	var of []corev1.Pod
	for _, pod := range pods.Items {
		if ref := metav1.GetControllerOf(&pod); ref != nil && ref.Kind == "TaskRun" && ref.Name == name {
			of = append(of, pod)
		}
	}
	return of
}

func mustJSONText(t interface{ Fatal(...any) }, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
