//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// checkResultsAndOnError runs script steps that hand back results and exit
// with codes of their own, in the local cluster's convention
// (docs/local-cluster.md): a line `result NAME VALUE` writes a result, a
// final `exit N` is the script's code. kwok's stages end each step as the
// controller's wrapper does on a real node, with the termination message
// {"exitCode": N, "results": {...}}, and the controller reads it:
//   - status.results holds the values in the Task's order, a later step's
//     value winning;
//   - a step with onError: continue that exits 3 reports exit code 3 and
//     reason Continued, and the run goes on and succeeds;
//   - a script that exits 2 under the default onError fails the run,
//     naming the step and its code.
func checkResultsAndOnError(t *testing.T, c *cluster) {
	results := []v1.ResultDeclaration{
		{Name: "digest", Description: "the image's digest"},
		{Name: "summary", Description: "what the build found"},
	}
	build := wrappers.Task(ns, "build-and-report").Steps(
		v1.Step{Name: "build", Image: "alpine:3",
			Script: "echo building\nresult digest sha256:0123abcd\nresult summary 'no findings yet'"},
		v1.Step{Name: "lint", Image: "alpine:3", OnError: v1.OnErrorContinue,
			Script: "echo linting\nexit 3"},
		v1.Step{Name: "report", Image: "alpine:3",
			Script: "result summary \"3 lint warnings\""},
	).Obj()
	build.Spec.Results = results
	check := wrappers.Task(ns, "check-and-fail").Steps(
		v1.Step{Name: "check", Image: "alpine:3", Script: "result digest none\nexit 2"},
	).Obj()
	check.Spec.Results = results
	create(t, c, build, check,
		wrappers.TaskRun(ns, "reported", build.Name).Obj(), wrappers.TaskRun(ns, "failed-check", check.Name).Obj())

	got := waitFinished(t, c, time.Minute, "reported", "failed-check")
	reported := got["reported"]
	if outcome(reported) != "True/Succeeded" {
		t.Errorf("TaskRun reported ended %s (%q), want True/Succeeded: onError: continue lets lint's code 3 pass",
			outcome(reported), conditionMessage(reported))
	}
	wantResults := []v1.RunResult{
		{Name: "digest", Value: ptr.To("sha256:0123abcd")},
		{Name: "summary", Value: ptr.To("3 lint warnings")},
	}
	if diff := cmp.Diff(wantResults, reported.Status.Results); diff != "" {
		t.Errorf("TaskRun reported: status.results (-want +got):\n%s", diff)
	}
	wantSteps := []stepEnd{{"build", 0, "Completed"}, {"lint", 3, v1.StepReasonContinued}, {"report", 0, "Completed"}}
	if diff := cmp.Diff(wantSteps, stepEnds(reported)); diff != "" {
		t.Errorf("TaskRun reported: how its steps ended (-want +got):\n%s", diff)
	}

	failed := got["failed-check"]
	wantMessage := `step "check" exited with code 2`
	if outcome(failed) != "False/StepFailed" || conditionMessage(failed) != wantMessage {
		t.Errorf("TaskRun failed-check ended %s (%q), want False/StepFailed (%q)", outcome(failed), conditionMessage(failed), wantMessage)
	}
	if diff := cmp.Diff([]stepEnd{{"check", 2, "Error"}}, stepEnds(failed)); diff != "" {
		t.Errorf("TaskRun failed-check: how its step ended (-want +got):\n%s", diff)
	}
}

// stepEnd is how a step ended, as status.steps says.
type stepEnd struct {
	Name     string
	ExitCode int32
	Reason   string
}

// stepEnds returns how each of run's steps ended; -1 for no exit code.
func stepEnds(run *v1.TaskRun) []stepEnd {
	ends := make([]stepEnd, len(run.Status.Steps))
	for i, s := range run.Status.Steps {
		ends[i] = stepEnd{s.Name, ptr.Deref(s.ExitCode, -1), s.Reason}
	}
	return ends
}

// conditionMessage is the message of run's Succeeded condition, for
// messages and comparisons.
func conditionMessage(run *v1.TaskRun) string {
	if cond := runstate.Succeeded(run); cond != nil {
		return cond.Message
	}
	return ""
}
