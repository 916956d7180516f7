//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// The rehearsals of the Pod shapes across releases (docs/upgrading.md, "Pod
// shapes across releases"): a release reads a shape one release before any
// release builds it by default, so that the runs in flight through an
// upgrade or a rollback by one release are tracked to their end whatever
// shape of Pod they have.

// chainedShape is the flag that makes the current manager build chained Pods,
// its default since release 7, said where a rehearsal must not depend on the
// default.
const chainedShape = "--pod-shape=chained"

// initContainersShape is the flag that makes the current manager build
// init containers, as release 6 (the release before chained Pods by
// default) does.
const initContainersShape = "--pod-shape=init-containers"

// checkStepsAndShapes checks, once the named runs have finished, that each
// ended as want says, its status.steps as stepsSeen says, every step that
// started having started when the one before ended (checkHandOvers), and
// that its Pod is chained or not as chained says.
func (r *rehearsal) checkStepsAndShapes(want map[string][]stepSeen, chained map[string]bool, when string) {
	r.t.Helper()
	all, err := runs(context.Background(), r.c)
	if err != nil {
		r.t.Fatal(err)
	}
	for name, wantSteps := range want {
		run := all[name]
		if run == nil {
			r.t.Errorf("%s: no TaskRun %s", when, name)
			continue
		}
		if diff := cmp.Diff(wantSteps, stepsSeen(run)); diff != "" {
			r.t.Errorf("%s: status.steps of TaskRun %s (-want +got):\n%s", when, name, diff)
		}
		checkHandOvers(r.t, run)
		pod := podOf(r.t, r.c, run)
		if runstate.Chained(pod) != chained[name] {
			r.t.Errorf("%s: the Pod of TaskRun %s is chained %t (annotations %v), want %t", when, name, runstate.Chained(pod), pod.Annotations, chained[name])
		}
	}
}

// greetSteps are the steps of a run of greetTask (or v1GreetTask) that
// succeeded.
var greetSteps = []stepSeen{{"say", v1.StepTerminated, 0, "Completed"}, {"wait", v1.StepTerminated, 0, "Completed"}}

// release5RunSteps are how release 5's runs in flight (and the run no
// controller saw) end, and whether the current manager, asked for chained
// Pods, gave them one: only the run that had no Pod yet.
var (
	release5RunSteps = map[string][]stepSeen{
		r5Running:  greetSteps,
		v1Running:  greetSteps,
		v1New:      greetSteps,
		r5aRunning: {{"wait", v1.StepTerminated, 0, "Completed"}},
	}
	release5RunChained = map[string]bool{v1New: true}
)

// The runs of rehearseShapeRollback.
const (
	shapeTask       = "handover"         // Task: three steps, the second long
	shapeFailTask   = "handover-fails"   // Task: the same, then one that fails and one skipped
	shapeRunning    = "handover-running" // chained, in flight through the shape's rollback; succeeds
	shapeFailing    = "handover-failing" // chained, in flight; its third step fails, its fourth is skipped
	shapeAfter      = "handover-after"   // of r5Greet, created after: init containers
	shapeStepSecond = 8                  // how long the second step runs: it must outlast the manager's restart
	shapeFailReason = `step "fail" exited with code 5`
)

// rehearseShapeRollback rehearses turning the chained Pod shape off while
// chained Pods run: the current manager, started with --pod-shape=chained
// (its default), runs two runs whose chained Pods are mid-step (the second
// of three, or four steps where the third fails); it is then replaced by
// the current manager with --pod-shape=init-containers, standing for a
// release that reads chained Pods but does not build them (release 6): a
// rollback by one release from the release that builds them by default. The runs must finish through their chained Pods with the
// right status.steps (each step started when the one before ended; after
// the failing step, the skipped one Waiting, never started); a new run
// must get init containers. The current manager must be running with
// --pod-shape=chained.
func (r *v1Rehearsal) rehearseShapeRollback() {
	t := r.t
	steps := func(more ...v1.Step) []v1.Step {
		return append([]v1.Step{
			{Name: "first", Image: "alpine:3", Script: "echo first"},
			{Name: "wait", Image: "alpine:3", Script: fmt.Sprintf("sleep %d", shapeStepSecond)},
		}, more...)
	}
	last := v1.Step{Name: "last", Image: "alpine:3", Script: "echo last"}
	create(t, r.c,
		wrappers.Task(ns, shapeTask).Steps(steps(last)...).Obj(),
		wrappers.Task(ns, shapeFailTask).Steps(steps(
			v1.Step{Name: "fail", Image: "alpine:3", Script: "exit 5"},
			v1.Step{Name: "skipped", Image: "alpine:3", Script: "echo skipped"})...).Obj(),
		wrappers.TaskRun(ns, shapeRunning, shapeTask).Obj(),
		wrappers.TaskRun(ns, shapeFailing, shapeFailTask).Obj())
	inFlight := []string{shapeRunning, shapeFailing}
	for _, name := range append(inFlight, shapeAfter) {
		r.wantPods[name] = []string{runstate.PodName(runNamed(name))}
	}
	waitFor(t, time.Minute, "the second step of both runs to run", func(ctx context.Context) error {
		all, err := runs(ctx, r.c)
		if err != nil {
			return err
		}
		for _, name := range inFlight {
			if run := all[name]; run == nil || len(run.Status.Steps) < 2 || run.Status.Steps[1].State != v1.StepRunning {
				return fmt.Errorf("TaskRun %s is %s", name, describe(run))
			}
		}
		return nil
	})
	pods := r.runningPods(inFlight...)
	r.checkStillRunning(pods...)
	r.m.stop()
	r.m = startManager(t, r.c, initContainersShape)
	// The rehearsal proves something only if the default shape's manager
	// meets chained Pods that still run.
	r.checkStillRunning(pods...)

	got := waitFinished(t, r.c, time.Minute, inFlight...)
	if outcome(got[shapeRunning]) != "True/Succeeded" {
		t.Errorf("TaskRun %s ended %s (%q), want True/Succeeded", shapeRunning, outcome(got[shapeRunning]), conditionMessage(got[shapeRunning]))
	}
	if failed := got[shapeFailing]; outcome(failed) != "False/StepFailed" || conditionMessage(failed) != shapeFailReason {
		t.Errorf("TaskRun %s ended %s (%q), want False/StepFailed (%q)", shapeFailing, outcome(failed), conditionMessage(failed), shapeFailReason)
	}
	passed := stepSeen{State: v1.StepTerminated, ExitCode: 0, Reason: "Completed"}
	named := func(name string, s stepSeen) stepSeen { s.Name = name; return s }
	r.checkStepsAndShapes(map[string][]stepSeen{
		shapeRunning: {named("first", passed), named("wait", passed), named("last", passed)},
		shapeFailing: {named("first", passed), named("wait", passed), {"fail", v1.StepTerminated, 5, "Error"}, {"skipped", v1.StepWaiting, -1, ""}},
	}, map[string]bool{shapeRunning: true, shapeFailing: true}, "chained Pods, after the manager went back to init containers")

	create(t, r.c, wrappers.TaskRun(ns, shapeAfter, r5Greet).Param("name", "ina").Obj())
	waitFinished(t, r.c, time.Minute, shapeAfter)
	r.checkStepsAndShapes(map[string][]stepSeen{shapeAfter: greetSteps}, nil, "a run created after the manager went back to init containers")
}
