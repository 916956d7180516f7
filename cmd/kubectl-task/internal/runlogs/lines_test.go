package runlogs_test

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// oneStep is a run of one step, "s", whose log is log.
type oneStep struct{ log io.Reader }

func (o oneStep) Steps(context.Context, bool) ([]string, error) { return []string{"s"}, nil }

func (o oneStep) Open(context.Context, string, bool) (io.ReadCloser, error) {
	return io.NopCloser(o.log), nil
}

func TestStreamCutsLongLines(t *testing.T) {
	const most = runlogs.MaxLineBytes - 1 // the longest line kept whole, without its newline
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := map[string]struct {
		log  string
		want string
	}{
		"a line of the bound, newline included, whole": {
			log:  x(most) + "\nnext\n",
			want: "[s] " + x(most) + "\n[s] next\n",
		},
		"a longer line cut, marked, the next line whole": {
			log:  x(most+1) + "\nnext\n",
			want: "[s] " + x(most+1) + runlogs.CutMark + "\n[s] next\n",
		},
		"a line many times the bound": {
			log:  x(10*runlogs.MaxLineBytes) + "\nnext\n",
			want: "[s] " + x(runlogs.MaxLineBytes) + runlogs.CutMark + "\n[s] next\n",
		},
		"a cut through a character drops its start": {
			log:  x(most) + "é and more\n",
			want: "[s] " + x(most) + runlogs.CutMark + "\n",
		},
		"a long last line without a newline": {
			log:  x(2 * runlogs.MaxLineBytes),
			want: "[s] " + x(runlogs.MaxLineBytes) + runlogs.CutMark + "\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			if _, err := runlogs.Stream(context.Background(), oneStep{strings.NewReader(tc.log)}, &out, runlogs.Options{}); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// endless yields n bytes of 'x', without a newline, and holds none of them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n)]
	for i := range p {
		p[i] = 'x'
	}
	e.n -= int64(len(p))
	return len(p), nil
}

// countingWriter counts what is written to it and keeps only the end.
type countingWriter struct {
	n    int
	tail string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	c.tail = string(p[max(0, len(p)-64):])
	return len(p), nil
}

func TestStreamPrintsAGigabyteLineInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a gigabyte")
	}
	const size = 1 << 30
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out countingWriter
	if _, err := runlogs.Stream(context.Background(), oneStep{&endless{n: size}}, &out, runlogs.Options{}); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 4<<20 {
		t.Errorf("printing a 1 GiB line allocated %d MiB, want at most 4 MiB", allocated>>20)
	}
	if want := len("[s] ") + runlogs.MaxLineBytes + len(runlogs.CutMark) + 1; out.n != want {
		t.Errorf("printed %d bytes, want %d: the line cut at %d bytes", out.n, want, runlogs.MaxLineBytes)
	}
	if !strings.HasSuffix(out.tail, runlogs.CutMark+"\n") {
		t.Errorf("the output ends %q, want the cut mark %q", out.tail, runlogs.CutMark)
	}
}
