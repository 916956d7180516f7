package runstate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

func TestPhaseFromCondition(t *testing.T) {
	tests := map[string]struct {
		condition *metav1.Condition
		want      v1alpha1.TaskRunPhase
	}{
		"no condition":              {nil, v1alpha1.TaskRunPhaseNone},
		"Unknown Pending":           {cond(metav1.ConditionUnknown, v1.ReasonPending), v1alpha1.TaskRunPhasePending},
		"Unknown WaitingForTask":    {cond(metav1.ConditionUnknown, v1.ReasonWaitingForTask), v1alpha1.TaskRunPhasePending},
		"Unknown Retrying":          {cond(metav1.ConditionUnknown, v1.ReasonRetrying), v1alpha1.TaskRunPhasePending},
		"Unknown any other reason":  {cond(metav1.ConditionUnknown, "SomethingNew"), v1alpha1.TaskRunPhasePending},
		"Unknown Running":           {cond(metav1.ConditionUnknown, v1.ReasonRunning), v1alpha1.TaskRunPhaseRunning},
		"True Succeeded":            {cond(metav1.ConditionTrue, v1.ReasonSucceeded), v1alpha1.TaskRunPhaseSucceeded},
		"False StepFailed":          {cond(metav1.ConditionFalse, v1.ReasonStepFailed), v1alpha1.TaskRunPhaseFailed},
		"False TaskRunTimeout":      {cond(metav1.ConditionFalse, v1.ReasonTimeout), v1alpha1.TaskRunPhaseFailed},
		"False TaskRunCancelled":    {cond(metav1.ConditionFalse, v1.ReasonCancelled), v1alpha1.TaskRunPhaseFailed},
		"False InvalidParams":       {cond(metav1.ConditionFalse, v1.ReasonInvalidParams), v1alpha1.TaskRunPhaseFailed},
		"False PodFailed":           {cond(metav1.ConditionFalse, v1.ReasonPodFailed), v1alpha1.TaskRunPhaseFailed},
		"False ResultsTooLarge":     {cond(metav1.ConditionFalse, v1.ReasonResultsTooLarge), v1alpha1.TaskRunPhaseFailed},
		"False ImagePullFailed":     {cond(metav1.ConditionFalse, v1.ReasonImagePullFailed), v1alpha1.TaskRunPhaseFailed},
		"False PodConfigFailed":     {cond(metav1.ConditionFalse, v1.ReasonPodConfigFailed), v1alpha1.TaskRunPhaseFailed},
		"False Failed":              {cond(metav1.ConditionFalse, v1.ReasonFailed), v1alpha1.TaskRunPhaseFailed},
		"status the API disallows":  {cond("Maybe", v1.ReasonRunning), v1alpha1.TaskRunPhaseNone},
		"empty status":              {cond("", v1.ReasonRunning), v1alpha1.TaskRunPhaseNone},
		"True whatever its reason":  {cond(metav1.ConditionTrue, v1.ReasonRunning), v1alpha1.TaskRunPhaseSucceeded},
		"False whatever its reason": {cond(metav1.ConditionFalse, v1.ReasonRunning), v1alpha1.TaskRunPhaseFailed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runstate.PhaseFromCondition(tc.condition)); diff != "" {
				t.Errorf("PhaseFromCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionFromPhase(t *testing.T) {
	at := metav1.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
	withTime := func(c *metav1.Condition) *metav1.Condition {
		c.LastTransitionTime = at
		return c
	}
	tests := map[string]struct {
		phase v1alpha1.TaskRunPhase
		want  *metav1.Condition
	}{
		"empty phase: no condition": {v1alpha1.TaskRunPhaseNone, nil},
		"Pending":                   {v1alpha1.TaskRunPhasePending, withTime(cond(metav1.ConditionUnknown, v1.ReasonPending))},
		"Running":                   {v1alpha1.TaskRunPhaseRunning, withTime(cond(metav1.ConditionUnknown, v1.ReasonRunning))},
		"Succeeded":                 {v1alpha1.TaskRunPhaseSucceeded, withTime(cond(metav1.ConditionTrue, v1.ReasonSucceeded))},
		"Failed":                    {v1alpha1.TaskRunPhaseFailed, withTime(cond(metav1.ConditionFalse, v1.ReasonFailed))},
		"phase outside the enum":    {"Exploded", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runstate.ConditionFromPhase(tc.phase, at)); diff != "" {
				t.Errorf("ConditionFromPhase() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReasons: each reason once, and a run with it is finished exactly when
// its status says so.
func TestReasons(t *testing.T) {
	seen := map[v1.TaskRunReason]bool{}
	for _, r := range runstate.Reasons() {
		if seen[r.Reason] {
			t.Errorf("reason %s listed twice", r.Reason)
		}
		seen[r.Reason] = true
		run := &v1.TaskRun{Status: v1.TaskRunStatus{Conditions: []metav1.Condition{*cond(r.Status, r.Reason)}}}
		if got, want := runstate.Finished(run), r.Status != metav1.ConditionUnknown; got != want {
			t.Errorf("Finished() of a run %s/%s = %t, want %t", r.Status, r.Reason, got, want)
		}
	}
}

// cond returns a Succeeded condition with only a status and a reason.
func cond(status metav1.ConditionStatus, reason v1.TaskRunReason) *metav1.Condition {
	return &metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: string(reason)}
}

// The tables of docs/lifecycle.md and docs/conversion.md that say what a
// run's reasons are and which v1alpha1 phase each has are checked against
// this package, so that the docs and the code cannot drift apart.

const (
	lifecycleDoc       = "../../docs/lifecycle.md"
	conversionDoc      = "../../docs/conversion.md"
	conditionToPhase   = "| condition status | condition reason | phase |"
	phaseToCondition   = "| phase | condition status | condition reason |"
	docNoCondition     = "(no condition)"
	docAnyOther        = "(any other)"
	docEmptyPhase      = `""`
	otherReasonExample = "SomethingNew"
)

// lastTransition is the time a derived condition is given in the tests.
var lastTransition = metav1.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)

// TestLifecycleDocTable keeps the condition table of docs/lifecycle.md true:
// one row per reason the API defines, each with its status and the v1alpha1
// phase that conversion actually gives it.
func TestLifecycleDocTable(t *testing.T) {
	rows := markdown.Table(t, lifecycleDoc, "| status | reason |")

	var reasons []runstate.Reason
	for _, row := range rows {
		status, reason, phase := row[0], row[1], strings.Trim(row[len(row)-1], `"`)
		var got v1alpha1.TaskRunPhase
		if status == docNoCondition {
			got = runstate.PhaseFromCondition(nil)
		} else {
			reasons = append(reasons, runstate.Reason{Status: metav1.ConditionStatus(status), Reason: v1.TaskRunReason(reason)})
			got = runstate.PhaseFromCondition(&metav1.Condition{Type: v1.ConditionSucceeded, Status: metav1.ConditionStatus(status), Reason: reason})
		}
		if string(got) != phase {
			t.Errorf("docs say %s/%s is v1alpha1 phase %q; conversion gives %q", status, reason, phase, got)
		}
	}

	if diff := cmp.Diff(runstate.Reasons(), reasons); diff != "" {
		t.Errorf("the table's reasons differ from the API's (-api +docs):\n%s", diff)
	}
}

func TestDocConditionToPhaseTable(t *testing.T) {
	rows := markdown.Table(t, conversionDoc, conditionToPhase)
	reasons := map[string]bool{}
	for _, row := range rows {
		status, reason, phase := row[0], row[1], docPhase(row[2])
		reasons[status+"/"+reason] = true
		t.Run(strings.Join(row, " | "), func(t *testing.T) {
			var c *metav1.Condition
			if status != docNoCondition {
				c = &metav1.Condition{Type: v1.ConditionSucceeded, Status: metav1.ConditionStatus(status), Reason: reason}
				if status == docAnyOther {
					c.Status = "Maybe"
				}
				if reason == docAnyOther {
					c.Reason = otherReasonExample
				}
			}
			if diff := cmp.Diff(phase, runstate.PhaseFromCondition(c)); diff != "" {
				t.Errorf("PhaseFromCondition() disagrees with the doc (-doc +code):\n%s", diff)
			}
		})
	}
	for _, row := range runstate.Reasons() {
		if !reasons[string(row.Status)+"/"+string(row.Reason)] {
			t.Errorf("the doc's table lacks the API's row %s %s", row.Status, row.Reason)
		}
	}
}

func TestDocPhaseToConditionTable(t *testing.T) {
	rows := markdown.Table(t, conversionDoc, phaseToCondition)
	phases := map[v1alpha1.TaskRunPhase]bool{}
	for _, row := range rows {
		phase, status, reason := docPhase(row[0]), row[1], row[2]
		phases[phase] = true
		t.Run(strings.Join(row, " | "), func(t *testing.T) {
			if phase == docAnyOther {
				phase = "Exploded"
			}
			var want *metav1.Condition
			if status != docNoCondition {
				want = &metav1.Condition{
					Type: v1.ConditionSucceeded, Status: metav1.ConditionStatus(status), Reason: reason, LastTransitionTime: lastTransition,
				}
			}
			if diff := cmp.Diff(want, runstate.ConditionFromPhase(phase, lastTransition)); diff != "" {
				t.Errorf("ConditionFromPhase() disagrees with the doc (-doc +code):\n%s", diff)
			}
		})
	}
	for _, phase := range []v1alpha1.TaskRunPhase{
		v1alpha1.TaskRunPhaseNone, v1alpha1.TaskRunPhasePending, v1alpha1.TaskRunPhaseRunning,
		v1alpha1.TaskRunPhaseSucceeded, v1alpha1.TaskRunPhaseFailed,
	} {
		if !phases[phase] {
			t.Errorf("the doc's table lacks phase %q", phase)
		}
	}
}

// docPhase reads a phase cell, where the empty phase is written "".
func docPhase(cell string) v1alpha1.TaskRunPhase {
	if cell == docEmptyPhase {
		return v1alpha1.TaskRunPhaseNone
	}
	return v1alpha1.TaskRunPhase(cell)
}
