// Package live pushes what changes to the pages that show it, as
// server-sent events: a run's new row to the runs page, a run's new state
// and its steps' log lines to the run's page. The pages' script (app.js)
// swaps in the HTML a change carries, rendered and escaped by the server,
// and appends log lines as text.
package live

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// pingEvery is how often a quiet stream sends a comment: a client that has
// gone away is found out, and nothing between closes an idle connection.
const pingEvery = 15 * time.Second

// Stream writes server-sent events to one response; Send may be called from
// several goroutines.
type Stream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool
}

// Open starts an event stream on w.
func Open(w http.ResponseWriter) (*Stream, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// Ask a proxy not to hold events back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &Stream{w: w, rc: http.NewResponseController(w)}
	// A page that loses the stream opens it again in 2 s.
	if err := s.write("retry: 2000\n\n"); err != nil {
		return nil, err
	}
	return s, nil
}

// Send sends one event named event with data, which may span lines.
func (s *Stream) Send(event, data string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", event)
	data = strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return s.write(b.String())
}

// Ping sends a comment, which a page ignores.
func (s *Stream) Ping() error { return s.write(": ping\n\n") }

// Close ends the stream: later events are not sent. A handler closes it
// before it returns, for the response is gone then.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// errClosed is what sending on a closed stream returns.
var errClosed = errors.New("the event stream is closed")

func (s *Stream) write(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
