package live

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/runindex"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestSend(t *testing.T) {
	tests := map[string]struct {
		event, data, want string
	}{
		"one line":               {"run", "<tr>", "event: run\ndata: <tr>\n\n"},
		"lines, each data":       {"run", "<tr>\n<td>a</td>\n</tr>", "event: run\ndata: <tr>\ndata: <td>a</td>\ndata: </tr>\n\n"},
		"CR and CRLF end lines":  {"run", "a\r\nb\rc", "event: run\ndata: a\ndata: b\ndata: c\n\n"},
		"no data, one data line": {"resync", "", "event: resync\ndata: \n\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			s, err := Open(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(tc.event, tc.data); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("retry: 2000\n\n"+tc.want, w.Body.String()); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
			if got := w.Header().Get("Content-Type"); got != "text/event-stream; charset=utf-8" {
				t.Errorf("Content-Type %q", got)
			}
			s.Close()
			if err := s.Send("x", "y"); err == nil {
				t.Error("a closed stream sent an event")
			}
		})
	}
}

// TestLogWriter checks that what runlogs.Stream prints becomes one event a
// line, the step apart from its text, and an attempt's mark on its own.
func TestLogWriter(t *testing.T) {
	w := httptest.NewRecorder()
	s, _ := Open(w)
	lw := &logWriter{s: s}
	for _, chunk := range []string{"=== attempt 2 of 3\n", "[build] go build ./...\n", "[build] <b>bold</b>", " and more\n", "[test] ] [x] \n", "[sidecar db] ready\n", "[test] no newline"} {
		if _, err := lw.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.flush(io.ErrUnexpectedEOF); err != nil {
		t.Fatal(err)
	}
	want := `retry: 2000

event: log
data: {"text":"=== attempt 2 of 3"}

event: log
data: {"step":"build","text":"go build ./..."}

event: log
data: {"step":"build","text":"\u003cb\u003ebold\u003c/b\u003e and more"}

event: log
data: {"step":"test","text":"] [x] "}

event: log
data: {"sidecar":"db","text":"ready"}

event: log
data: {"step":"test","text":"no newline"}

event: log-end
data: {"error":"unexpected EOF"}

`
	if diff := cmp.Diff(want, w.Body.String()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

type rows struct{}

func (rows) Row(run *v1.TaskRun) (string, error) { return "<tr>" + run.Name + "</tr>", nil }
func (rows) RowID(run *v1.TaskRun) string        { return "run/" + run.Name }

// TestServeRuns checks which changes a page of runs is sent: rows the
// filter selects, new or changed, and the rows it stops selecting, but not
// a run it never showed.
func TestServeRuns(t *testing.T) {
	f, err := runindex.ParseFilter(map[string][]string{"task": {"build"}})
	if err != nil {
		t.Fatal(err)
	}
	build := func(name string) *v1.TaskRun { return wrappers.TaskRun("ns", name, "build").Obj() }
	changes := make(chan runindex.Change, 10)
	changes <- runindex.Change{Run: build("shown")}
	changes <- runindex.Change{Run: build("added")}
	changes <- runindex.Change{Run: wrappers.TaskRun("ns", "other", "test").Obj()}
	changes <- runindex.Change{Run: wrappers.TaskRun("ns", "shown", "test").Obj()}
	changes <- runindex.Change{Run: build("added"), Deleted: true}
	changes <- runindex.Change{Run: build("never-shown"), Deleted: true}
	close(changes)

	w := httptest.NewRecorder()
	s, _ := Open(w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ServeRuns(ctx, s, changes, f, rows{}, map[string]bool{"ns/shown": true}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range strings.Split(strings.TrimSpace(w.Body.String()), "\n\n")[1:] {
		got = append(got, strings.ReplaceAll(ev, "\n", " "))
	}
	want := []string{
		"event: run data: <tr>shown</tr>",
		"event: new data: <tr>added</tr>",
		"event: gone data: run/shown",
		"event: gone data: run/added",
		"event: resync data:",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// cannedLogs is a Source of two steps whose lines come one at a time.
type cannedLogs struct{ lines map[string][]string }

var _ runlogs.Source = cannedLogs{}

func (c cannedLogs) Steps(context.Context, bool) ([]string, error) { return []string{"a", "b"}, nil }

func (c cannedLogs) Open(_ context.Context, step string, _ bool) (io.ReadCloser, error) {
	r, w := io.Pipe()
	go func() {
		for _, l := range c.lines[step] {
			_, _ = io.WriteString(w, l+"\n")
		}
		w.Close()
	}()
	return r, nil
}

type view struct{}

func (view) Live(run *v1.TaskRun) (string, error)    { return "<p>" + run.Name + "</p>", nil }
func (view) Outcome(run *v1.TaskRun) (string, error) { return "<p>outcome</p>", nil }
func (view) Events(context.Context, *v1.TaskRun) (string, error) {
	return "<p>events</p>", nil
}

// TestServeRun checks that a run's page gets the run as it changes and its
// logs line by line, and the end once the run has finished and its logs
// were read.
func TestServeRun(t *testing.T) {
	runs := make(chan *v1.TaskRun, 1)
	runs <- wrappers.TaskRun("ns", "r", "t").Obj()
	w := httptest.NewRecorder()
	s, _ := Open(w)
	done := make(chan error)
	go func() {
		done <- ServeRun(context.Background(), s, runs, cannedLogs{map[string][]string{"a": {"one", "two"}, "b": {"three"}}}, view{})
	}()
	finished := wrappers.TaskRun("ns", "r", "t").Obj()
	finished.Status.Conditions = []metav1.Condition{{Type: v1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Succeeded"}}
	runs <- finished
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeRun did not end once the run finished and its logs were read")
	}
	body := w.Body.String()
	for _, want := range []string{`data: {"step":"a","text":"one"}`, `data: {"step":"a","text":"two"}`, `data: {"step":"b","text":"three"}`,
		"event: log-end\ndata: {}", "event: live\ndata: <p>r</p>", "event: outcome\ndata: <p>outcome</p>", "event: events\ndata: <p>events</p>", "event: done"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	if strings.Index(body, `"one"`) > strings.Index(body, `"three"`) {
		t.Errorf("the lines came out of order:\n%s", body)
	}
}
