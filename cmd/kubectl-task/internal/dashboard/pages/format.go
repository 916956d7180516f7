package pages

import (
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file writes times, durations and states as the pages show them: as
// kubectl task's commands do (5m ago, 1m30s, Failed(StepFailed)).

// none stands for a time or value that does not exist (yet).
const none = "—"

// Time is a moment as a page shows it: how long ago, and exactly.
type Time struct {
	// Ago is "5m ago", or none; ISO is RFC 3339 in UTC, for <time datetime>.
	Ago, ISO string
}

func timeOf(t *metav1.Time, now time.Time) Time {
	if t == nil || t.IsZero() {
		return Time{Ago: none}
	}
	return Time{Ago: since(t.Time, now) + " ago", ISO: t.UTC().Format(time.RFC3339)}
}

// since is the time from t to now, in kubectl's AGE style: "5m".
func since(t, now time.Time) string {
	return duration.HumanDuration(max(now.Sub(t), 0))
}

// between is how long from start to end, or none if either is missing.
func between(start, end *metav1.Time) string {
	if start == nil || end == nil || start.IsZero() || end.IsZero() {
		return none
	}
	return since(start.Time, end.Time)
}

// runDuration is how long a run took, or has taken so far.
func runDuration(run *v1.TaskRun, now time.Time) string {
	switch {
	case run.Status.StartTime == nil:
		return none
	case run.Status.CompletionTime != nil:
		return between(run.Status.StartTime, run.Status.CompletionTime)
	case runstate.Finished(run):
		return none
	}
	return since(run.Status.StartTime.Time, now) + " so far"
}

// Tone is how a state reads at a glance; the text always says it too.
type Tone string

// The tones of a run's or a step's state.
const (
	ToneOK      Tone = "ok"
	ToneFailed  Tone = "failed"
	ToneGoingOn Tone = "going-on"
	ToneWaiting Tone = "waiting"
)

func runTone(run *v1.TaskRun) Tone {
	c := runstate.Succeeded(run)
	switch {
	case c != nil && c.Status == metav1.ConditionTrue:
		return ToneOK
	case c != nil && c.Status == metav1.ConditionFalse:
		return ToneFailed
	case c != nil && c.Reason == string(v1.ReasonRunning):
		return ToneGoingOn
	}
	return ToneWaiting
}

func stepTone(s v1.StepState) Tone {
	switch {
	case s.State == v1.StepRunning:
		return ToneGoingOn
	case s.State == v1.StepTerminated && s.ExitCode != nil && (*s.ExitCode == 0 || s.Reason == "Continued"):
		return ToneOK
	case s.State == v1.StepTerminated:
		// A non-zero exit, or none: the step was stopped (a cancel, a
		// timeout, its Pod lost).
		return ToneFailed
	}
	return ToneWaiting
}

// attemptText is "2 of 3" for a run that may retry, "" for one that may not.
func attemptText(run *v1.TaskRun) string {
	n := len(run.Status.Attempts) + 1
	allowed := max(runstate.AttemptsAllowed(run), n)
	if allowed == 1 {
		return ""
	}
	return strconv.Itoa(n) + " of " + strconv.Itoa(allowed)
}

// orNone is s, or none when s is empty.
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
