package live

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// The events of a run page's stream.
const (
	// EventLive carries the HTML of the part of the page that shows the
	// run's state and steps, EventOutcome that of its results, attempts
	// and conditions, EventEvents that of its Events.
	EventLive    = "live"
	EventOutcome = "outcome"
	EventEvents  = "events"
	// EventLogReset starts the logs: the page empties its log panels, so
	// that a stream opened again does not show lines twice.
	EventLogReset = "log-reset"
	// EventLog carries a LogLine as JSON; EventLogEnd a LogEnd, once the
	// logs have been read to their end.
	EventLog    = "log"
	EventLogEnd = "log-end"
	// EventDeleted says the run was deleted; EventDone that it finished
	// and its logs were read: the page closes the stream.
	EventDeleted = "deleted"
	EventDone    = "done"
)

// LogLine is a line of a step's log, or of a sidecar's (Sidecar set), or
// (both empty) a line that marks the start of an attempt.
type LogLine struct {
	Step    string `json:"step,omitempty"`
	Sidecar string `json:"sidecar,omitempty"`
	Text    string `json:"text"`
}

// LogEnd says why the logs ended early, if they did.
type LogEnd struct {
	Error string `json:"error,omitempty"`
}

// RunView renders the parts of a run's page that follow it.
type RunView interface {
	// Live is the HTML of the run's state and steps, Outcome that of its
	// results, attempts and conditions, Events that of its Events.
	Live(run *v1.TaskRun) (string, error)
	Outcome(run *v1.TaskRun) (string, error)
	Events(ctx context.Context, run *v1.TaskRun) (string, error)
}

// ServeRun sends s the run as it changes (each value from runs, nil once it
// is deleted) and its steps' logs as they are written, read from logs and
// followed, until the run has finished and its logs were read, or ctx is
// done.
func ServeRun(ctx context.Context, s *Stream, runs <-chan *v1.TaskRun, logs runlogs.Source, view RunView) error {
	if err := s.Send(EventLogReset, ""); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	logsDone := make(chan error, 1)
	logsExited := make(chan struct{})
	go func() {
		defer close(logsExited)
		w := &logWriter{s: s}
		_, err := runlogs.Stream(ctx, logs, w, runlogs.Options{Follow: true})
		logsDone <- w.flush(err)
	}()
	// The logs' goroutine writes to the response: it must be done before
	// the handler returns and the response is gone.
	defer func() {
		cancel()
		<-logsExited
	}()
	finished, logsRead := false, false

	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for !finished || !logsRead {
		select {
		case <-ctx.Done():
			return nil
		case <-ping.C:
			if err := s.Ping(); err != nil {
				return err
			}
		case err := <-logsDone:
			logsRead = true
			if err != nil {
				return err
			}
		case run := <-runs:
			if run == nil {
				return s.Send(EventDeleted, "")
			}
			if err := sendRun(ctx, s, run, view); err != nil {
				return err
			}
			finished = runstate.Finished(run)
		}
	}
	return s.Send(EventDone, "")
}

func sendRun(ctx context.Context, s *Stream, run *v1.TaskRun, view RunView) error {
	html, err := view.Live(run)
	if err != nil {
		return err
	}
	if err := s.Send(EventLive, html); err != nil {
		return err
	}
	if html, err = view.Outcome(run); err != nil {
		return err
	}
	if err := s.Send(EventOutcome, html); err != nil {
		return err
	}
	if html, err = view.Events(ctx, run); err != nil {
		return err
	}
	return s.Send(EventEvents, html)
}

// logWriter turns what runlogs.Stream prints, "[STEP] text" and "[sidecar
// NAME] text" lines and the lines that mark attempts, into log events.
type logWriter struct {
	s       *Stream
	partial []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := indexNewline(w.partial)
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if err := w.send(line); err != nil {
			return 0, err
		}
	}
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func (w *logWriter) send(line string) error {
	l := LogLine{Text: line}
	if len(line) > 0 && line[0] == '[' {
		// Step names are DNS labels: none holds "] ".
		for i := 1; i+1 < len(line); i++ {
			if line[i] == ']' && line[i+1] == ' ' {
				l = LogLine{Step: line[1:i], Text: line[i+2:]}
				if name, ok := strings.CutPrefix(l.Step, "sidecar "); ok {
					// runlogs.SidecarPrefix: a step's name holds no space.
					l = LogLine{Sidecar: name, Text: l.Text}
				}
				break
			}
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return w.s.Send(EventLog, string(b))
}

// flush ends the logs: the rest of a last line, then why they stopped
// early, if they did. It returns an error only if the stream failed.
func (w *logWriter) flush(streamErr error) error {
	if len(w.partial) > 0 {
		if err := w.send(string(w.partial)); err != nil {
			return err
		}
	}
	end := LogEnd{}
	if streamErr != nil && !errors.Is(streamErr, context.Canceled) {
		end.Error = streamErr.Error()
	}
	b, _ := json.Marshal(end) // a struct of a string always marshals
	return w.s.Send(EventLogEnd, string(b))
}
