package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/live"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
)

// syncWait is how long a page waits for the runs index to be complete
// after the dashboard started, before it says it is still reading.
const syncWait = 10 * time.Second

// runs is the list of runs: a page of those the query's filter selects,
// newest first, from the index.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	f, ok := s.filter(w, r)
	if !ok || !s.waitForIndex(w, r) {
		return
	}
	number, _ := strconv.Atoi(r.URL.Query().Get("page"))
	p := s.index.Query(f, number, s.cfg.PageSize)
	page := pages.NewRunsPage(s.layout(r), f, p, s.cfg.PageSize, s.cfg.Namespace == "", s.index.Namespaces(), s.index.Tasks(), s.cfg.Now())
	if err := s.index.Err(); err != nil {
		page.Stale = apiMessage(err)
	}
	s.pageOrFail(w, http.StatusOK, pages.PageRuns, page)
}

// liveRuns streams the changes to the runs that the query's filter selects.
func (s *Server) liveRuns(w http.ResponseWriter, r *http.Request) {
	f, ok := s.filter(w, r)
	if !ok || !s.waitForIndex(w, r) {
		return
	}
	// Subscribed before the runs shown are taken, so that no change falls
	// between the two.
	changes, stop := s.index.Subscribe()
	defer stop()
	shown := s.index.Keys(f)
	stream, err := live.Open(w)
	if err != nil {
		return
	}
	defer stream.Close()
	_ = live.ServeRuns(r.Context(), stream, changes, f, rowView{s}, shown)
}

// filter reads the runs filter from the query, refusing a malformed one.
func (s *Server) filter(w http.ResponseWriter, r *http.Request) (runindex.Filter, bool) {
	f, err := runindex.ParseFilter(r.URL.Query())
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, "Malformed filter", err.Error(), "/runs", "All runs")
		return f, false
	}
	if s.cfg.Namespace != "" {
		f.Namespace = s.cfg.Namespace
	}
	return f, true
}

// waitForIndex waits until the runs index is complete; if it cannot be,
// it says why (the API server forbids listing runs, say) and returns false.
func (s *Server) waitForIndex(w http.ResponseWriter, r *http.Request) bool {
	ctx, cancel := context.WithTimeout(r.Context(), syncWait)
	defer cancel()
	if s.index.WaitForSync(ctx) {
		return true
	}
	if err := s.index.Err(); err != nil {
		s.fail(w, r, "listing "+s.scopeText(), err)
		return false
	}
	w.Header().Set("Retry-After", "2")
	s.refuse(w, r, http.StatusServiceUnavailable, "Still reading the runs",
		fmt.Sprintf("The dashboard is still reading %s from the API server; reload in a moment.", s.scopeText()), "/runs", "Reload")
	return false
}

func (s *Server) scopeText() string {
	if s.cfg.Namespace == "" {
		return "the TaskRuns of every namespace"
	}
	return fmt.Sprintf("the TaskRuns of namespace %q", s.cfg.Namespace)
}

// rowView renders the rows of the runs list.
type rowView struct{ s *Server }

func (v rowView) Row(run *v1.TaskRun) (string, error) {
	row := pages.NewRunRow(run, v.s.cfg.Now())
	row.ShowNamespace = v.s.cfg.Namespace == ""
	return v.s.render.Fragment(pages.FragmentRunRow, row)
}

func (v rowView) RowID(run *v1.TaskRun) string { return pages.RowID(run.Namespace, run.Name) }
