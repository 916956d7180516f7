package pages

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/paramtext"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/eventtime"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// RunPage is one run in detail.
type RunPage struct {
	Layout
	Namespace, Name, URL string
	Task, TaskURL        string
	// TaskNote says why the Task could not be read, if it could not: the
	// params and workspaces are then the run's own only.
	TaskNote string
	Labels   []string
	Live     RunLive
	Events   RunEvents
	Params   []ParamRow
	// Workspaces are the Task's, with the run's bindings.
	Workspaces []WorkspaceRow
	Pod        PodSettings
	// Steps are the steps whose logs the page shows, in order; Sidecars
	// the sidecars, whose logs follow the steps'.
	Steps, Sidecars []string
	// LiveURL streams the run's changes and its steps' logs; LogURL is
	// the logs as plain text; YAMLURL the run in both API versions.
	LiveURL, LogURL, YAMLURL string
	// ActionURL is where the page's action forms post (ActionURL/cancel).
	ActionURL string
}

// RunLive is the part of a run's page that follows the run as it changes.
type RunLive struct {
	Status          string
	Tone            Tone
	MessageLabel    string
	Message         string
	CancelRequested bool
	Finished        bool
	Started         Time
	Completed       Time
	Duration        string
	Attempt         string
	Pod             string
	// PodShape says how the Pod lays out its steps, and why
	// (runinfo.PodShape), or why that is not known; empty while the run
	// has no Pod.
	PodShape       string
	Timeout        string
	PendingTimeout string
	Steps          []StepRow
	Sidecars       []SidecarRow
	Conditions     []ConditionRow
	Results        []ResultRow
	Attempts       []AttemptRow
}

// StepRow is a step of the run's timeline.
type StepRow struct {
	Name, State, ExitCode, Reason, Duration string
	Tone                                    Tone
}

// SidecarRow is a sidecar of the run (status.sidecars, else its Task's).
type SidecarRow struct {
	Name, State, Ready, Restarts, Reason string
	Tone                                 Tone
}

// ConditionRow is one of the run's conditions.
type ConditionRow struct {
	Type, Status, Reason, Message string
	Changed                       Time
}

// ResultRow is a result the run handed back, or one its Task declares.
type ResultRow struct{ Name, Value string }

// AttemptRow is an earlier attempt of a run that retries.
type AttemptRow struct {
	Number               int
	Pod, Reason, Message string
	Started, Completed   Time
}

// ParamRow is a param with the value the run gets, and where it comes from.
type ParamRow struct{ Name, Type, Value, From string }

// WorkspaceRow is a workspace with what the run binds it to.
type WorkspaceRow struct{ Name, Source, MountPath, From string }

// PodSettings are what the run sets on its Pod.
type PodSettings struct {
	ServiceAccount string
	// Template is spec.podTemplate as YAML, empty when the run has none.
	Template string
}

// RunEvents are the latest Events of the run and its Pod, or why they
// cannot be shown.
type RunEvents struct {
	Note string
	Rows []EventRow
}

// EventRow is one Event.
type EventRow struct {
	Type, Reason, Object, Message, Count string
	Seen                                 Time
}

// NewRunPage is run in detail; task is its Task (nil if taskNote says why
// it could not be read), podShape its Pod's shape (RunLive.PodShape),
// events its Events (or eventsNote why not).
func NewRunPage(l Layout, run *v1.TaskRun, task *v1.Task, taskNote, podShape string, events []corev1.Event, eventsNote string, now time.Time) RunPage {
	p := RunPage{
		Layout: l.For("TaskRun "+run.Name, "runs"), Namespace: run.Namespace, Name: run.Name, URL: RunPath(run.Namespace, run.Name),
		Task: run.Spec.TaskRef.Name, TaskURL: TaskPath(run.Namespace, run.Spec.TaskRef.Name), TaskNote: taskNote,
		Labels: NewRunRow(run, now).Labels, Live: NewRunLive(run, task, podShape, now), Events: NewRunEvents(events, eventsNote, now),
		Params: paramRows(run, task), Workspaces: workspaceRows(run, task), Pod: podSettings(run), Steps: stepNames(run, task),
		Sidecars: sidecarNames(run, task),
	}
	p.LiveURL, p.LogURL, p.YAMLURL, p.ActionURL = p.URL+"/live", p.URL+"/log.txt", p.URL+"/yaml", p.URL
	return p
}

// NewRunLive is the part of run's page that follows it; podShape is its
// Pod's shape (RunLive.PodShape).
func NewRunLive(run *v1.TaskRun, task *v1.Task, podShape string, now time.Time) RunLive {
	live := RunLive{
		Status: runstate.Summary(run), Tone: runTone(run), CancelRequested: runstate.CancelRequested(run), Finished: runstate.Finished(run),
		Started: timeOf(run.Status.StartTime, now), Completed: timeOf(run.Status.CompletionTime, now),
		Duration: runDuration(run, now), Attempt: attemptText(run), Pod: orNone(run.Status.PodName), PodShape: podShape, Timeout: timeoutText(run),
		PendingTimeout: pendingTimeoutText(run),
	}
	if c := runstate.Succeeded(run); c != nil && c.Message != "" {
		live.MessageLabel, live.Message = "Message", c.Message
		if c.Status == metav1.ConditionUnknown && c.Reason == string(v1.ReasonPending) {
			live.MessageLabel = "Why pending"
		}
	}
	steps := run.Status.Steps
	if len(steps) == 0 && task != nil {
		for _, s := range task.Spec.Steps {
			steps = append(steps, v1.StepState{Name: s.Name})
		}
	}
	for _, s := range steps {
		row := StepRow{Name: s.Name, State: orNone(string(s.State)), ExitCode: none, Reason: orNone(s.Reason), Duration: none, Tone: stepTone(s)}
		if s.State == "" {
			row.State = "Not started"
		}
		if s.ExitCode != nil {
			row.ExitCode = strconv.Itoa(int(*s.ExitCode))
		}
		switch s.State {
		case v1.StepTerminated:
			row.Duration = between(s.StartedAt, s.FinishedAt)
		case v1.StepRunning:
			if s.StartedAt != nil {
				row.Duration = since(s.StartedAt.Time, now) + " so far"
			}
		}
		live.Steps = append(live.Steps, row)
	}
	live.Sidecars = sidecarRows(run, task)
	for _, c := range run.Status.Conditions {
		live.Conditions = append(live.Conditions, ConditionRow{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, Changed: timeOf(&c.LastTransitionTime, now)})
	}
	live.Results = resultRows(run, task)
	for i, a := range run.Status.Attempts {
		live.Attempts = append(live.Attempts, AttemptRow{Number: i + 1, Pod: a.PodName, Reason: orNone(a.Reason), Message: orNone(a.Message),
			Started: timeOf(a.StartTime, now), Completed: timeOf(a.CompletionTime, now)})
	}
	return live
}

// NewRunEvents are events, or note saying why there are none to show.
func NewRunEvents(events []corev1.Event, note string, now time.Time) RunEvents {
	e := RunEvents{Note: note}
	for i := range events {
		ev := &events[i]
		row := EventRow{Type: ev.Type, Reason: ev.Reason, Object: ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name,
			Message: ev.Message, Seen: Time{Ago: since(eventtime.LastSeen(ev), now) + " ago", ISO: eventtime.LastSeen(ev).UTC().Format(time.RFC3339)}}
		if n := runinfo.EventCount(ev); n > 1 {
			row.Count = "×" + strconv.Itoa(int(n))
		}
		e.Rows = append(e.Rows, row)
	}
	return e
}

// timeoutText is spec.timeouts.total: how long the run may take in all.
func timeoutText(run *v1.TaskRun) string {
	return runinfo.TimeoutText(run.Spec.Timeouts.Total, "the controller's default ("+runstate.DefaultTimeout.String()+" unless set)")
}

// pendingTimeoutText is spec.timeouts.pending: how long the run may wait
// for its first step to start.
func pendingTimeoutText(run *v1.TaskRun) string {
	return runinfo.TimeoutText(run.Spec.Timeouts.Pending, "not set (the controller's image pull and configuration timeouts apply)")
}

func resultRows(run *v1.TaskRun, task *v1.Task) []ResultRow {
	var rows []ResultRow
	for _, r := range runinfo.Results(run, task) {
		value := none
		if r.Value != nil {
			value = *r.Value
		}
		rows = append(rows, ResultRow{r.Name, value})
	}
	return rows
}

func paramRows(run *v1.TaskRun, task *v1.Task) []ParamRow {
	var rows []ParamRow
	for _, p := range runinfo.Params(task, run.Spec.Params) {
		value := paramtext.Text(p.Value)
		if p.Source == runstate.Missing {
			value = none
		}
		rows = append(rows, ParamRow{p.Name, string(p.Type), value, string(p.Source)})
	}
	return rows
}

func workspaceRows(run *v1.TaskRun, task *v1.Task) []WorkspaceRow {
	var rows []WorkspaceRow
	for _, w := range runinfo.Workspaces(run, task) {
		rows = append(rows, WorkspaceRow{w.Name, w.Source, orNone(w.MountPath), w.From})
	}
	return rows
}

func podSettings(run *v1.TaskRun) PodSettings {
	s := PodSettings{ServiceAccount: run.Spec.ServiceAccountName}
	if s.ServiceAccount == "" {
		s.ServiceAccount = "none named: the Pod gets no API token"
	}
	if run.Spec.PodTemplate != nil {
		if b, err := yaml.Marshal(run.Spec.PodTemplate); err == nil {
			s.Template = string(b)
		}
	}
	return s
}

// stepNames are the steps the run's logs are shown for: its status's,
// else its Task's.
// sidecarRows are the run's sidecars as status.sidecars reports them, else
// as the spec it runs declares them, not started.
func sidecarRows(run *v1.TaskRun, task *v1.Task) []SidecarRow {
	var rows []SidecarRow
	for _, s := range run.Status.Sidecars {
		row := SidecarRow{Name: s.Name, State: orNone(string(s.State)), Ready: "no", Restarts: "0", Reason: orNone(s.Reason), Tone: ToneWaiting}
		if s.Ready != nil && *s.Ready {
			row.Ready = "yes"
		}
		if s.RestartCount != nil {
			row.Restarts = strconv.Itoa(int(*s.RestartCount))
		}
		switch {
		case s.State == v1.StepRunning && row.Ready == "yes":
			row.Tone = ToneOK
		case s.State == v1.StepTerminated && s.ExitCode != nil && *s.ExitCode != 0, s.RestartCount != nil:
			row.Tone = ToneFailed
		}
		rows = append(rows, row)
	}
	if len(rows) > 0 {
		return rows
	}
	for _, name := range declaredSidecars(run, task) {
		rows = append(rows, SidecarRow{Name: name, State: "Not started", Ready: "no", Restarts: "0", Reason: none, Tone: ToneWaiting})
	}
	return rows
}

// sidecarNames are the names of the run's sidecars, whose logs the page
// shows after the steps'.
func sidecarNames(run *v1.TaskRun, task *v1.Task) []string {
	var names []string
	for _, s := range run.Status.Sidecars {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		names = declaredSidecars(run, task)
	}
	return names
}

// declaredSidecars are the sidecars of the spec run runs: pinned, inline,
// or its Task's.
func declaredSidecars(run *v1.TaskRun, task *v1.Task) []string {
	spec := run.Status.TaskSpec
	switch {
	case spec != nil:
	case run.Spec.TaskSpec != nil:
		spec = run.Spec.TaskSpec
	case task != nil:
		spec = &task.Spec
	default:
		return nil
	}
	var names []string
	for _, s := range spec.Sidecars {
		names = append(names, s.Name)
	}
	return names
}

func stepNames(run *v1.TaskRun, task *v1.Task) []string {
	var names []string
	for _, s := range run.Status.Steps {
		names = append(names, s.Name)
	}
	if len(names) == 0 && task != nil {
		for _, s := range task.Spec.Steps {
			names = append(names, s.Name)
		}
	}
	return names
}
