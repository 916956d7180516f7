package live

import (
	"context"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
)

// The events of the runs page's stream.
const (
	// EventRun carries the HTML of a changed run's row; EventNew that of a
	// run the filter newly selects, which the page counts.
	EventRun = "run"
	EventNew = "new"
	// EventGone carries the id of the row of a run that was deleted, or
	// no longer matches the page's filter.
	EventGone = "gone"
	// EventResync says that changes were missed: the page reads the list
	// afresh.
	EventResync = "resync"
)

// RowRenderer renders a run's row, and names its id.
type RowRenderer interface {
	Row(run *v1.TaskRun) (string, error)
	RowID(run *v1.TaskRun) string
}

// ServeRuns sends s the changes to the runs that f selects, as they come
// from changes, until ctx is done or changes is closed (the page fell too
// far behind: it is told to read the list afresh). shown are the keys
// (namespace/name) of the runs f selected when the page was read: a run
// that leaves them, deleted or changed past the filter, is said to be gone;
// one never shown is not.
func ServeRuns(ctx context.Context, s *Stream, changes <-chan runindex.Change, f runindex.Filter, rows RowRenderer, shown map[string]bool) error {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ping.C:
			if err := s.Ping(); err != nil {
				return err
			}
		case c, ok := <-changes:
			if !ok {
				return s.Send(EventResync, "")
			}
			if err := sendChange(s, c, f, rows, shown); err != nil {
				return err
			}
		}
	}
}

func sendChange(s *Stream, c runindex.Change, f runindex.Filter, rows RowRenderer, shown map[string]bool) error {
	key := c.Run.Namespace + "/" + c.Run.Name
	if c.Deleted || !f.Matches(c.Run) {
		if !shown[key] {
			return nil
		}
		delete(shown, key)
		return s.Send(EventGone, rows.RowID(c.Run))
	}
	event := EventRun
	if !shown[key] {
		event = EventNew
		shown[key] = true
	}
	html, err := rows.Row(c.Run)
	if err != nil {
		return err
	}
	return s.Send(event, html)
}
