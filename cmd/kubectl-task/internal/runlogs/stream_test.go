package runlogs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// fakeStep is one step of fakeSource.
type fakeStep struct {
	name string
	// chunks are written to the log one by one, delay apart, as a container
	// that is still running writes them.
	chunks []string
	delay  time.Duration
	// err is what Open returns instead of the log.
	err error
	// brokenBy, if set, ends the log after its chunks instead of EOF.
	brokenBy error
}

// fakeSource serves canned step logs and records, in order, each step it
// opens and each log read to its end, so that a test sees whether Stream
// waited for one step before opening the next.
type fakeSource struct {
	steps []fakeStep

	mu     sync.Mutex
	events []string
}

func (f *fakeSource) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, fmt.Sprintf(format, args...))
}

func (f *fakeSource) Steps(context.Context, bool) ([]string, error) {
	names := make([]string, len(f.steps))
	for i, s := range f.steps {
		names[i] = s.name
	}
	return names, nil
}

func (f *fakeSource) Open(_ context.Context, step string, follow bool) (io.ReadCloser, error) {
	f.record("open %s follow=%t", step, follow)
	for _, s := range f.steps {
		if s.name != step {
			continue
		}
		if s.err != nil {
			return nil, s.err
		}
		r, w := io.Pipe()
		go func() {
			for _, c := range s.chunks {
				time.Sleep(s.delay)
				_, _ = io.WriteString(w, c)
			}
			f.record("end %s", step)
			_ = w.CloseWithError(s.brokenBy)
		}()
		return r, nil
	}
	return nil, fmt.Errorf("no step %q", step)
}

func TestStream(t *testing.T) {
	tests := map[string]struct {
		steps       []fakeStep
		opts        runlogs.Options
		wantOut     string
		wantPrinted int
		wantEvents  []string
		wantErr     string
	}{
		"steps in order, each line prefixed, a last line without newline ended": {
			steps: []fakeStep{
				{name: "fetch", chunks: []string{"one\ntwo\n"}},
				{name: "build", chunks: []string{"three"}},
				{name: "test"},
			},
			wantOut:     "[fetch] one\n[fetch] two\n[build] three\n",
			wantPrinted: 3,
			wantEvents: []string{
				"open fetch follow=false", "end fetch",
				"open build follow=false", "end build",
				"open test follow=false", "end test",
			},
		},
		"a slow step keeps its place before a fast one": {
			// The first step writes its lines over time, in pieces that split
			// lines; the second has all of its log at once. Reading both at
			// once would interleave them.
			steps: []fakeStep{
				{name: "slow", chunks: []string{"a", "1\na2", "\n", "a3\n"}, delay: 20 * time.Millisecond},
				{name: "fast", chunks: []string{"b1\nb2\n"}},
			},
			opts:        runlogs.Options{Follow: true},
			wantOut:     "[slow] a1\n[slow] a2\n[slow] a3\n[fast] b1\n[fast] b2\n",
			wantPrinted: 2,
			wantEvents:  []string{"open slow follow=true", "end slow", "open fast follow=true", "end fast"},
		},
		"stops at the first step that has not started": {
			steps: []fakeStep{
				{name: "fetch", chunks: []string{"fetched\n"}},
				{name: "build", err: runlogs.ErrNotStarted},
				{name: "test", chunks: []string{"must not be shown\n"}},
			},
			wantOut:     "[fetch] fetched\n",
			wantPrinted: 1,
			wantEvents:  []string{"open fetch follow=false", "end fetch", "open build follow=false"},
		},
		"one step": {
			steps: []fakeStep{
				{name: "fetch", chunks: []string{"fetched\n"}},
				{name: "build", chunks: []string{"built\n"}},
			},
			opts:        runlogs.Options{Step: "build", Follow: true},
			wantOut:     "[build] built\n",
			wantPrinted: 1,
			wantEvents:  []string{"open build follow=true", "end build"},
		},
		"unknown step": {
			steps:   []fakeStep{{name: "fetch"}, {name: "build"}},
			opts:    runlogs.Options{Step: "deploy"},
			wantErr: `the run has no step "deploy"; its steps are: fetch, build`,
		},
		"a log gone while followed: said after its lines, and no later step opened": {
			steps: []fakeStep{
				{name: "fetch", chunks: []string{"one\n", "two\n"}, brokenBy: &runlogs.GoneError{Why: `Pod "p" is on node "n", and the node is not ready`}},
				{name: "build", chunks: []string{"must not be shown\n"}},
			},
			opts:        runlogs.Options{Follow: true},
			wantOut:     "[fetch] one\n[fetch] two\n[fetch] (log gone: Pod \"p\" is on node \"n\", and the node is not ready)\n",
			wantPrinted: 1,
			wantEvents:  []string{"open fetch follow=true", "end fetch"},
		},
		"a log that cannot be read": {
			steps: []fakeStep{
				{name: "fetch", chunks: []string{"fetched\n"}},
				{name: "build", err: errors.New("container is gone")},
			},
			wantOut:     "[fetch] fetched\n",
			wantPrinted: 1,
			wantEvents:  []string{"open fetch follow=false", "end fetch", "open build follow=false"},
			wantErr:     `reading the log of step "build": container is gone`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := &fakeSource{steps: tc.steps}
			var out strings.Builder
			printed, err := runlogs.Stream(context.Background(), src, &out, tc.opts)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if printed != tc.wantPrinted {
				t.Errorf("printed %d steps, want %d", printed, tc.wantPrinted)
			}
			src.mu.Lock()
			defer src.mu.Unlock()
			if diff := cmp.Diff(tc.wantEvents, src.events); diff != "" {
				t.Errorf("opens and ends (-want +got):\n%s", diff)
			}
		})
	}
}
