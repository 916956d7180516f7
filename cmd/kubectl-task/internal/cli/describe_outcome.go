package cli

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file holds the parts of describe that release 3's run semantics
// added: why a run has not started, its retries and TTL, its results and
// its earlier attempts.

// messageLabel is the header's label for the Succeeded condition's message:
// while the run is Pending, its message says what holds the run back.
func messageLabel(c *metav1.Condition) string {
	if c.Status == metav1.ConditionUnknown && c.Reason == string(v1.ReasonPending) {
		return "Why Pending"
	}
	return "Message"
}

// retriesText says how often the run may retry, on what, and which attempt
// it is on; empty for a run that does not retry.
func retriesText(run *v1.TaskRun) string {
	if !mayRetry(run) {
		return ""
	}
	retries := 0
	if run.Spec.Retries != nil {
		retries = int(*run.Spec.Retries)
	}
	on := retryOnText(runstate.RetryOn(run))
	if len(run.Spec.RetryOn) == 0 {
		on += " (the default)"
	}
	return fmt.Sprintf("%d, on %s (attempt %d of %d)", retries, on, attempt(run), maxAttempts(run))
}

// retryOnText lists the failures a run retries: "StepFailed and PodFailed".
func retryOnText(on []v1.RetryReason) string {
	reasons := make([]string, len(on))
	for i, r := range on {
		reasons[i] = string(r)
	}
	return strings.Join(reasons, " and ")
}

// ttlText says when the controller deletes the run.
func (d *describer) ttlText(run *v1.TaskRun) string {
	ttl := run.Spec.TTLSecondsAfterFinished
	if ttl == nil {
		return "the controller's default (its --default-ttl-after-finished; kept unless set)"
	}
	text := flagDuration(time.Duration(*ttl)*time.Second) + " after it finishes"
	expires, ok := runstate.ExpiresAt(run, 0)
	if !ok {
		return text
	}
	if expires.After(d.now) {
		return fmt.Sprintf("%s: deleted at %s (in %s)", text, expires.UTC().Format(time.RFC3339), since(d.now, expires))
	}
	return fmt.Sprintf("%s: due for deletion since %s (%s ago)", text, expires.UTC().Format(time.RFC3339), since(expires, d.now))
}

// results shows the values the run handed back, in the Task's order as the
// status keeps them; then the results the Task declares that the run has not
// written (yet).
func (d *describer) results(run *v1.TaskRun, task *v1.Task) {
	d.line("")
	d.line("Results:")
	rows := runinfo.Results(run, task)
	if len(rows) == 0 {
		d.line("  (none)")
		return
	}
	d.line("  NAME\tVALUE")
	for _, r := range rows {
		value := none
		if r.Value != nil {
			value = shortValue(*r.Value, wholeInRun)
		}
		d.line("  %s\t%s", r.Name, value)
	}
}

// attempts shows the run's earlier attempts, oldest first; the header's Pod
// names the current one.
func (d *describer) attempts(run *v1.TaskRun) {
	if !mayRetry(run) {
		return
	}
	d.line("")
	d.line("Attempts:")
	if len(run.Status.Attempts) == 0 {
		d.line("  (none before this one)")
		return
	}
	d.line("  #\tPOD\tSTARTED\tCOMPLETED\tREASON\tMESSAGE")
	for i, a := range run.Status.Attempts {
		d.line("  %d\t%s\t%s\t%s\t%s\t%s", i+1, a.PodName, ago(a.StartTime, d.now), ago(a.CompletionTime, d.now), orNone(a.Reason), orNone(oneLine(a.Message)))
	}
}
