package pages

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// RunRow is one run in a list of runs.
type RunRow struct {
	ID, Namespace, Name, URL string
	// Order sorts rows as text, newest last (runinfo.NewestFirst, but
	// for the names' tie-break): a page places a row that changes by it.
	Order         string
	Task, TaskURL string
	// Status is runstate.Summary's word; Message the condition's message.
	Status, Message string
	Tone            Tone
	Started         Time
	Duration        string
	// Attempt is "2 of 3" for a run that may retry, else empty.
	Attempt string
	Labels  []string
	// ShowNamespace is set in a list of runs of every namespace.
	ShowNamespace bool
}

// NewRunRow is run as a row of a list, at now. run may be slim
// (runindex.Slim): a row shows nothing else.
func NewRunRow(run *v1.TaskRun, now time.Time) RunRow {
	row := RunRow{
		ID: RowID(run.Namespace, run.Name), Namespace: run.Namespace, Name: run.Name, URL: RunPath(run.Namespace, run.Name),
		Task: run.Spec.TaskRef.Name, TaskURL: TaskPath(run.Namespace, run.Spec.TaskRef.Name),
		Status: runstate.Summary(run), Tone: runTone(run),
		Started: timeOf(run.Status.StartTime, now), Duration: runDuration(run, now), Attempt: attemptText(run),
		Order: fmt.Sprintf("%020d.%020d", runinfo.StartedAt(run).UnixNano(), run.CreationTimestamp.UnixNano()),
	}
	if c := runstate.Succeeded(run); c != nil && c.Status != metav1.ConditionTrue {
		row.Message = oneLine(c.Message)
	}
	for _, key := range slices.Sorted(maps.Keys(run.Labels)) {
		row.Labels = append(row.Labels, key+"="+run.Labels[key])
	}
	return row
}

// RunsPage is the list of runs.
type RunsPage struct {
	Layout
	Filter runindex.Filter
	// AllNamespaces is set when the dashboard shows every namespace, so
	// that the list has a namespace column and filter.
	AllNamespaces bool
	// Namespaces, Tasks and Statuses are the filters' choices.
	Namespaces, Tasks []string
	Statuses          []StatusChoice
	Rows              []RunRow
	Total             int
	// Number of Pages; PrevURL and NextURL are empty at either end.
	Number, Pages    int
	PrevURL, NextURL string
	// LiveURL streams the changes to the list; the page's rows follow them
	// on the first page only (later pages would shift under the reader).
	LiveURL  string
	First    bool
	PageSize int
	// Stale says why the list may be out of date (the watch failed).
	Stale string
}

// StatusChoice is one choice of the status filter.
type StatusChoice struct {
	Value, Label string
	Selected     bool
}

var statusLabels = map[runindex.Status]string{
	runindex.AnyStatus: "any", runindex.GoingOn: "going on", runindex.Succeeded: "succeeded", runindex.Failed: "failed",
}

// NewRunsPage is page p of the runs that f selects.
func NewRunsPage(l Layout, f runindex.Filter, p runindex.Page, pageSize int, allNamespaces bool, namespaces, tasks []string, now time.Time) RunsPage {
	page := RunsPage{
		Layout: l.For("Runs", "runs"), Filter: f, AllNamespaces: allNamespaces, Namespaces: namespaces, Tasks: tasks,
		Total: p.Total, Number: p.Number, Pages: p.Pages, First: p.Number == 1, PageSize: pageSize,
		LiveURL: RunsLivePath(f.Query()),
	}
	for _, s := range runindex.Statuses {
		page.Statuses = append(page.Statuses, StatusChoice{Value: string(s), Label: statusLabels[s], Selected: s == f.Status})
	}
	for _, run := range p.Runs {
		row := NewRunRow(run, now)
		row.ShowNamespace = allNamespaces
		page.Rows = append(page.Rows, row)
	}
	at := func(n int) string {
		q := f.Query()
		if n > 1 {
			q.Set("page", strconv.Itoa(n))
		}
		return RunsPath(q)
	}
	if p.Number > 1 {
		page.PrevURL = at(p.Number - 1)
	}
	if p.Number < p.Pages {
		page.NextURL = at(p.Number + 1)
	}
	return page
}

// TaskRunsURL is the runs page filtered to Task ns/name.
func TaskRunsURL(ns, name string) string {
	return RunsPath(url.Values{"ns": {ns}, "task": {name}})
}
