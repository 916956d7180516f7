package runlogs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// streaming is Stream running in the background, for a test that changes
// the run while Stream follows it.
type streaming struct {
	out  strings.Builder
	done chan streamResult
}

type streamResult struct {
	printed int
	err     error
}

// startStream starts Stream on src with opts.
func startStream(ctx context.Context, src runlogs.Source, opts runlogs.Options) *streaming {
	s := &streaming{done: make(chan streamResult, 1)}
	go func() {
		printed, err := runlogs.Stream(ctx, src, &s.out, opts)
		s.done <- streamResult{printed, err}
	}()
	return s
}

// expectRunning fails t if Stream returns within 200 ms: while, says what
// it should be waiting for.
func (s *streaming) expectRunning(t *testing.T, while string) {
	t.Helper()
	select {
	case r := <-s.done:
		t.Fatalf("Stream returned (%d printed, error %v) while %s:\n%s", r.printed, r.err, while, s.out.String())
	case <-time.After(200 * time.Millisecond):
	}
}

// expect waits for Stream to return, and checks that it printed want, in
// printed steps, with no error.
func (s *streaming) expect(t *testing.T, printed int, want string) {
	t.Helper()
	r := <-s.done
	if r.err != nil || r.printed != printed {
		t.Errorf("Stream: %d printed, error %v; want %d, no error", r.printed, r.err, printed)
	}
	if diff := cmp.Diff(want, s.out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// write updates the run (the fake client has no status subresource for
// TaskRuns), or creates obj.
func write(ctx context.Context, c client.Client, obj client.Object) error {
	r, ok := obj.(*v1.TaskRun)
	if !ok {
		return c.Create(ctx, obj)
	}
	current := &v1.TaskRun{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(r), current); err != nil {
		return err
	}
	r.ResourceVersion = current.ResourceVersion
	return c.Update(ctx, r)
}
