package runindex

import (
	"fmt"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// Status selects runs by how far they got.
type Status string

// The statuses a filter selects by; the empty one selects every run.
const (
	AnyStatus Status = ""
	// GoingOn runs have not finished: Pending, Running, Retrying, ...
	GoingOn   Status = "going-on"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
)

// Statuses are the statuses a filter can select by, in the order a form
// offers them.
var Statuses = []Status{AnyStatus, GoingOn, Succeeded, Failed}

// Filter selects runs, as the runs page's form and its URL say.
type Filter struct {
	// Namespace, Task and Status select runs when set.
	Namespace string
	Task      string
	Status    Status
	// Labels is a label selector as kubectl takes it (team=build, !draft);
	// Selector is it parsed, nil when Labels is empty.
	Labels   string
	Selector labels.Selector
}

// ParseFilter reads a filter from a URL's query: ns, task, status and l.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{
		Namespace: strings.TrimSpace(q.Get("ns")),
		Task:      strings.TrimSpace(q.Get("task")),
		Status:    Status(q.Get("status")),
		Labels:    strings.TrimSpace(q.Get("l")),
	}
	switch f.Status {
	case AnyStatus, GoingOn, Succeeded, Failed:
	default:
		return Filter{}, fmt.Errorf("unknown status %q; it is one of going-on, succeeded and failed", f.Status)
	}
	if f.Labels != "" {
		sel, err := labels.Parse(f.Labels)
		if err != nil {
			return Filter{}, fmt.Errorf("the label selector %q: %w", f.Labels, err)
		}
		f.Selector = sel
	}
	return f, nil
}

// Query is the filter as a URL's query, for links that keep it.
func (f Filter) Query() url.Values {
	q := url.Values{}
	for key, value := range map[string]string{"ns": f.Namespace, "task": f.Task, "status": string(f.Status), "l": f.Labels} {
		if value != "" {
			q.Set(key, value)
		}
	}
	return q
}

// Matches reports whether f selects run.
func (f Filter) Matches(run *v1.TaskRun) bool {
	if f.Namespace != "" && run.Namespace != f.Namespace {
		return false
	}
	if f.Task != "" && run.Spec.TaskRef.Name != f.Task {
		return false
	}
	if f.Selector != nil && !f.Selector.Matches(labels.Set(run.Labels)) {
		return false
	}
	return f.Status.matches(run)
}

func (s Status) matches(run *v1.TaskRun) bool {
	c := runstate.Succeeded(run)
	switch s {
	case GoingOn:
		return !runstate.Finished(run)
	case Succeeded:
		return c != nil && c.Status == metav1.ConditionTrue
	case Failed:
		return c != nil && c.Status == metav1.ConditionFalse
	}
	return true
}
