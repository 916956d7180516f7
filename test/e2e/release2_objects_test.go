//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// This file holds release 2's fixtures: Tasks, and TaskRuns in every phase,
// written through each version it served (v1beta1 and v1alpha1) while its
// own manager ran them, and the checks once the current release took over.

// Release 2's runs: r2- written through v1beta1, r2a- through v1alpha1.
const (
	r2Succeeded = "r2-succeeded" // params and a timeout
	r2Failed    = "r2-failed"    // a step exits 3
	r2TimedOut  = "r2-timedout"  // its step outlasts its 2s timeout
	r2Cancelled = "r2-cancelled" // cancelled at creation: never gets a Pod
	r2Invalid   = "r2-invalid"   // no value for a param without a default: no Pod
	r2Running   = "r2-running"   // its step runs through the upgrade
	r2Waiting   = "r2-waiting"   // waits for its Task, created after the upgrade
	r2New       = "r2-new"       // created once release 2's controller stopped

	r2aSucceeded = "r2a-succeeded"
	r2aFailed    = "r2a-failed"
	r2aStopped   = "r2a-stopped" // a v1alpha1 client wrote phase Failed while it ran
	r2aRunning   = "r2a-running" // its step runs through the upgrade
	r2aNew       = "r2a-new"     // created once release 2's controller stopped

	// r2LaterTask is the Task r2Waiting waits for.
	r2LaterTask = "r2-later"
	// release2RunningSeconds is how long the running runs' step sleeps:
	// long enough to outlast the end of release 2's part and the upgrade
	// on a slow machine (about 10 s).
	release2RunningSeconds = 20
)

// release2InFlight are release 2's runs that have not finished at the upgrade.
var release2InFlight = map[string]bool{r2Running: true, r2Waiting: true, r2New: true, r2aRunning: true, r2aNew: true}

// release2Outcomes are how each of release 2's runs ends.
var release2Outcomes = map[string]string{
	r2Succeeded:  "True/Succeeded",
	r2Failed:     "False/StepFailed",
	r2TimedOut:   "False/TaskRunTimeout",
	r2Cancelled:  "False/TaskRunCancelled",
	r2Invalid:    "False/InvalidParams",
	r2Running:    "True/Succeeded",
	r2Waiting:    "True/Succeeded",
	r2New:        "True/Succeeded",
	r2aSucceeded: "True/Succeeded",
	r2aFailed:    "False/StepFailed",
	r2aStopped:   "False/Failed",
	r2aRunning:   "True/Succeeded",
	r2aNew:       "True/Succeeded",
}

// release2RunningPods are the Pods that must still run when the current
// manager starts, for the rehearsal to prove that it takes them over: named
// as release 2 named them, RUN-pod.
var release2RunningPods = []string{r2Running + "-pod", r2aRunning + "-pod"}

// createRelease2Objects writes release 2's Tasks and runs while its manager
// runs, waits until each has reached its phase, then stops release 2's
// controller (its webhooks serve on) and writes the runs that no controller
// has seen. It returns the views of every object in ns then.
func (r *rehearsal) createRelease2Objects() views {
	t := r.t
	build := wrappers.V1alpha1Task(ns, "r2a-build").Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...").Obj()
	build.Labels = map[string]string{"team": "shop"}
	create(t, r.c, greetTask("r2-greet"),
		wrappers.V1beta1Task(wrappers.Task(ns, "r2-flaky").Step("compile", "alpine:3", "go build ./...").Step("test", "alpine:3", "go test ./...\nexit 3").Obj()),
		build,
		wrappers.V1alpha1Task(ns, "r2a-sleepy").Step("wait", "alpine:3", fmt.Sprintf("sleep %d", release2RunningSeconds)).Obj(),
		wrappers.V1alpha1Task(ns, "r2a-long").Step("wait", "alpine:3", "sleep 600").Obj())

	running := wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Running, "r2-greet").Param("name", "ron").Param("pause", fmt.Sprint(release2RunningSeconds)).Obj())
	running.Labels = map[string]string{"team": "shop"}
	stopped := wrappers.V1alpha1TaskRun(ns, r2aStopped, "r2a-long").Obj()
	stopped.Annotations = map[string]string{"note": "stopped by a v1alpha1 client"}
	create(t, r.c,
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Succeeded, "r2-greet").Param("name", "ann").Param("greeting", "hi").Timeout(10*time.Minute).Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Failed, "r2-flaky").Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2TimedOut, "r2-greet").Param("name", "tim").Param("pause", "600").Timeout(2*time.Second).Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Cancelled, "r2-greet").Param("name", "cat").Param("pause", "600").Cancelled().Obj()),
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Invalid, "r2-greet").Obj()),
		running,
		wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2Waiting, r2LaterTask).Timeout(30*time.Minute).Obj()),
		wrappers.V1alpha1TaskRun(ns, r2aSucceeded, "r2a-build").Obj(),
		wrappers.V1alpha1TaskRun(ns, r2aFailed, "r2-flaky").Obj(),
		wrappers.V1alpha1TaskRun(ns, r2aRunning, "r2a-sleepy").Obj(),
		stopped)

	waitFinished(t, r.c, time.Minute, r2Succeeded, r2Failed, r2TimedOut, r2Cancelled, r2Invalid, r2aSucceeded, r2aFailed)
	r.waitReason(map[string]v1beta1.TaskRunReason{
		r2Running: v1beta1.ReasonRunning, r2aRunning: v1beta1.ReasonRunning, r2aStopped: v1beta1.ReasonRunning,
		r2Waiting: v1beta1.ReasonWaitingForTask,
	})
	r.failThroughV1alpha1(r2aStopped)

	// Release 2's controller stops; its webhooks serve on, so that runs
	// are written through both versions that no controller has seen.
	r.stopController()
	create(t, r.c, wrappers.V1beta1TaskRun(wrappers.TaskRun(ns, r2New, "r2-greet").Param("name", "nia").Obj()), wrappers.V1alpha1TaskRun(ns, r2aNew, "r2a-build").Obj())

	before := r.readViews()
	r.checkFinishedOutcomes(before, release2Outcomes, release2InFlight, "release 2")
	return before
}

// checkFinishedOutcomes checks, before an upgrade or a rollback from
// release, that each run of outcomes but those in flight has ended as
// outcomes says, in before; it stops the test otherwise: the rehearsal
// would prove nothing of the runs that were to be finished.
func (r *rehearsal) checkFinishedOutcomes(before views, outcomes map[string]string, inFlight map[string]bool, release string) {
	got := map[string]string{}
	for name := range outcomes {
		if !inFlight[name] {
			got[name] = betaOutcome(before.betaRuns[name])
		}
	}
	want := maps.Clone(outcomes)
	maps.DeleteFunc(want, func(name, _ string) bool { return inFlight[name] })
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Fatalf("outcomes of %s's finished runs under %s (-want +got):\n%s", release, release, diff)
	}
}

// checkRunsFinished waits until every run of outcomes has finished, and
// checks that each ended as outcomes says.
func (r *rehearsal) checkRunsFinished(outcomes map[string]string, timeout time.Duration, when string) {
	got := waitFinished(r.t, r.c, timeout, slices.Collect(maps.Keys(outcomes))...)
	ended := map[string]string{}
	for name := range outcomes {
		ended[name] = outcome(got[name])
	}
	if diff := cmp.Diff(outcomes, ended); diff != "" {
		r.t.Errorf("outcomes of the runs %s (-want +got):\n%s", when, diff)
	}
}

// waitReason waits until each named run's Succeeded condition has the reason.
func (r *rehearsal) waitReason(want map[string]v1beta1.TaskRunReason) {
	waitFor(r.t, time.Minute, fmt.Sprintf("TaskRuns to reach %v", want), func(ctx context.Context) error {
		all, err := runs(ctx, r.c)
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if cond := runstate.Succeeded(all[name]); cond == nil || cond.Reason != string(want[name]) {
				return fmt.Errorf("TaskRun %s is %s", name, describe(all[name]))
			}
		}
		return nil
	})
}

// checkRelease2Objects checks, once the current manager runs, that release
// 2's runs end as they should: the finished ones left alone, the running
// ones through their Pods, the waiting one once its Task is created, the new
// ones run; and that every object in before reads the same in both versions
// (checkViewsKept), the runs in flight at the upgrade having finished.
func (r *rehearsal) checkRelease2Objects(before views, inFlight map[string]bool) {
	t := r.t
	create(t, r.c, wrappers.V1beta1Task(wrappers.Task(ns, r2LaterTask).Step("say", "alpine:3", "echo later").Obj()))
	r.checkRunsFinished(release2Outcomes, 2*release2RunningSeconds*time.Second, "of release 2, after the upgrade")
	waitFinished(t, r.c, 2*runningSeconds*time.Second, slices.Collect(maps.Keys(inFlight))...)
	r.checkViewsKept(before, inFlight, "after the upgrade from release 2")
}
