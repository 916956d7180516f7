package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/paramtext"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/eventtime"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func (p *plugin) newDescribeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe RUN",
		Short: "Show a run in detail: params, workspaces, Pod settings, conditions, steps, results, attempts and Events",
		Long: `Show a run in detail: its Task and labels; each param with its effective value
and where it comes from (the run, or the Task's default); each workspace with
its source and mount path; the ServiceAccount and Pod template; the steps'
env (where each variable's value comes from; literal values are shown, as
kubectl describe pod shows them) and resources; the timeout, retries and TTL;
the conditions, each step with its state, exit code and duration, the
results, the earlier attempts of a run that retries, and the run's recent
Events and its Pod's (or, where they cannot be listed, a note saying why).
"Pod shape" says how the Pod lays out its steps: chained (every step a
container that waits for the one before), or init containers, with the
reason when the chained shape was asked for and the steps could not have it.
While a run is Pending, "Why Pending" says what holds it back: its Pod
cannot be scheduled, an image cannot be pulled, and so on.

Env and resources are read from the Task as it is now.`,
		Example:           `  kubectl task describe greet-x7k2p`,
		Aliases:           []string{"desc"},
		Args:              exactlyOne("the name of a run"),
		ValidArgsFunction: p.completeRuns(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.runDescribe(cmd.Context(), args[0])
		},
	}
}

func (p *plugin) runDescribe(ctx context.Context, name string) error {
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	run, err := c.getRun(ctx, ns, name)
	if err != nil {
		return err
	}
	// A Task deleted since the run started is no reason to show nothing.
	// A run that gives its spec inline names no Task: its spec is its own.
	var taskNote string
	task := &v1.Task{}
	if run.Spec.TaskSpec != nil {
		task = runstate.TaskToRun(run, nil)
	} else if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Spec.TaskRef.Name}, task); err != nil {
		task = nil
		taskNote = fmt.Sprintf("Task %q cannot be read (%v)", run.Spec.TaskRef.Name, clusterError(err, c.Host))
		if apierrors.IsNotFound(err) {
			taskNote = fmt.Sprintf("Task %q does not exist", run.Spec.TaskRef.Name)
		}
	}
	// Events are an extra: someone who may read runs but not Events (RBAC)
	// still gets the run, and a note where the Events would be.
	events, err := runinfo.RunEvents(ctx, c.Client, run)
	var eventsNote string
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case err != nil:
		eventsNote = fmt.Sprintf("cannot be listed: %s", clusterError(err, c.Host))
	}
	// The Pod's shape, too, is an extra, which Pods gone or hidden by RBAC
	// do not keep from the rest.
	shape, gone, err := runinfo.RunPodShape(ctx, c.Client, run)
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case err != nil:
		shape = fmt.Sprintf("%s (the Pod cannot be read: %s)", none, oneLine(clusterError(err, c.Host).Error()))
	case gone:
		shape = none + " (the Pod no longer exists)"
	}
	d := describer{w: newTabWriter(p.Streams.Out), now: p.Now()}
	d.header(run, shape)
	d.params(run, task, taskNote)
	d.workspaces(run, task, taskNote)
	d.podSettings(run)
	d.stepEnv(task, taskNote)
	d.stepResources(task, taskNote)
	d.conditions(run)
	d.steps(run, task)
	d.sidecars(run)
	d.results(run, task)
	d.attempts(run)
	d.events(events, eventsNote)
	return d.w.Flush()
}

// describer writes the sections of describe, aligned by one tabwriter.
type describer struct {
	w   *tabwriter.Writer
	now time.Time
}

func (d *describer) line(format string, args ...any) {
	fmt.Fprintf(d.w, format+"\n", args...)
}

// header shows the run's facts; podShape is how its Pod's steps are laid
// out, "" while it has no Pod.
func (d *describer) header(run *v1.TaskRun, podShape string) {
	d.line("Name:\t%s", run.Name)
	d.line("Namespace:\t%s", run.Namespace)
	for i, l := range labelLines(run.Labels) {
		if i == 0 {
			d.line("Labels:\t%s", l)
		} else {
			d.line("\t%s", l)
		}
	}
	if run.Spec.TaskSpec != nil {
		d.line("Task:\t%s", "(inline: spec.taskSpec)")
	} else {
		d.line("Task:\t%s", run.Spec.TaskRef.Name)
	}
	d.line("Status:\t%s", runstate.Summary(run))
	if c := runstate.Succeeded(run); c != nil && c.Message != "" {
		d.line("%s:\t%s", messageLabel(c), c.Message)
	}
	if runstate.CancelRequested(run) {
		d.line("Cancel:\trequested (spec.status: Cancelled)")
	}
	d.line("Started:\t%s", d.timestamp(run.Status.StartTime))
	d.line("Completed:\t%s", d.timestamp(run.Status.CompletionTime))
	d.line("Duration:\t%s", runDuration(run))
	d.line("Timeout:\t%s", timeoutText(run))
	d.line("Pending timeout:\t%s", pendingTimeoutText(run))
	if r := retriesText(run); r != "" {
		d.line("Retries:\t%s", r)
	}
	d.line("TTL:\t%s", d.ttlText(run))
	d.line("Pod:\t%s", orNone(run.Status.PodName))
	if podShape != "" {
		d.line("Pod shape:\t%s", podShape)
	}
}

// timestamp shows t in UTC, and how long ago it was.
func (d *describer) timestamp(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return none
	}
	return fmt.Sprintf("%s (%s)", t.UTC().Format(time.RFC3339), ago(t, d.now))
}

// timeoutText is spec.timeouts.total: how long the run may take in all.
func timeoutText(run *v1.TaskRun) string {
	return runinfo.TimeoutText(run.Spec.Timeouts.Total, "the controller's default (its --default-timeout, "+flagDuration(runstate.DefaultTimeout)+" unless set)")
}

// pendingTimeoutText is spec.timeouts.pending: how long the run may wait
// for its first step to start.
func pendingTimeoutText(run *v1.TaskRun) string {
	return runinfo.TimeoutText(run.Spec.Timeouts.Pending, "not set (the controller's --image-pull-timeout and --pod-config-timeout apply)")
}

func (d *describer) params(run *v1.TaskRun, task *v1.Task, taskNote string) {
	d.line("")
	d.line("Params:")
	if task == nil {
		d.line("  (%s: the run's own values only)", taskNote)
	}
	params := runinfo.Params(task, run.Spec.Params)
	if len(params) == 0 {
		d.line("  (none)")
		return
	}
	d.line("  NAME\tTYPE\tVALUE\tFROM")
	for _, p := range params {
		var value string
		switch p.Source {
		case runstate.Missing:
			value = "<none>"
		case runstate.FromDefault:
			value = shortValue(paramtext.Text(p.Value), wholeInTask)
		default:
			value = shortValue(paramtext.Text(p.Value), wholeInRun)
		}
		d.line("  %s\t%s\t%s\t%s", p.Name, p.Type, value, p.Source)
	}
}

func (d *describer) conditions(run *v1.TaskRun) {
	d.line("")
	d.line("Conditions:")
	if len(run.Status.Conditions) == 0 {
		d.line("  (none: the controller has not seen the run yet)")
		return
	}
	d.line("  TYPE\tSTATUS\tREASON\tLAST TRANSITION\tMESSAGE")
	for _, c := range run.Status.Conditions {
		d.line("  %s\t%s\t%s\t%s\t%s", c.Type, c.Status, c.Reason, ago(&c.LastTransitionTime, d.now), c.Message)
	}
}

// steps shows the steps as the run's status reports them; before it reports
// any, the Task's steps, with no state.
func (d *describer) steps(run *v1.TaskRun, task *v1.Task) {
	d.line("")
	d.line("Steps:")
	steps := run.Status.Steps
	if len(steps) == 0 && task != nil {
		for _, s := range task.Spec.Steps {
			steps = append(steps, v1.StepState{Name: s.Name})
		}
	}
	if len(steps) == 0 {
		d.line("  (none reported yet)")
		return
	}
	d.line("  NAME\tSTATE\tEXIT CODE\tREASON\tDURATION")
	for _, s := range steps {
		exit := none
		if s.ExitCode != nil {
			exit = strconv.Itoa(int(*s.ExitCode))
		}
		took := none
		switch s.State {
		case v1.StepTerminated:
			took = between(s.StartedAt, s.FinishedAt)
		case v1.StepRunning:
			if s.StartedAt != nil {
				took = since(s.StartedAt.Time, d.now) + " so far"
			}
		}
		d.line("  %s\t%s\t%s\t%s\t%s", s.Name, orNone(string(s.State)), exit, orNone(s.Reason), took)
	}
}

// sidecars shows the run's sidecars as status.sidecars reports them;
// nothing for a run without (docs/sidecars.md).
func (d *describer) sidecars(run *v1.TaskRun) {
	if len(run.Status.Sidecars) == 0 {
		return
	}
	d.line("")
	d.line("Sidecars:")
	d.line("  NAME\tSTATE\tREADY\tRESTARTS\tREASON")
	for _, s := range run.Status.Sidecars {
		ready, restarts := "no", "0"
		if s.Ready != nil && *s.Ready {
			ready = "yes"
		}
		if s.RestartCount != nil {
			restarts = strconv.Itoa(int(*s.RestartCount))
		}
		d.line("  %s\t%s\t%s\t%s\t%s", s.Name, orNone(string(s.State)), ready, restarts, orNone(s.Reason))
	}
}

// events shows the Events, or, if they could not be read, note saying why.
func (d *describer) events(events []corev1.Event, note string) {
	d.line("")
	d.line("Events:")
	if note != "" {
		d.line("  (%s)", oneLine(note))
		return
	}
	if len(events) == 0 {
		d.line("  (none)")
		return
	}
	d.line("  TYPE\tREASON\tAGE\tOBJECT\tMESSAGE")
	for i := range events {
		e := &events[i]
		age := since(eventtime.LastSeen(e), d.now)
		if n := runinfo.EventCount(e); n > 1 {
			age += fmt.Sprintf(" (x%d)", n)
		}
		d.line("  %s\t%s\t%s\t%s/%s\t%s", e.Type, e.Reason, age, e.InvolvedObject.Kind, e.InvolvedObject.Name, oneLine(e.Message))
	}
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
