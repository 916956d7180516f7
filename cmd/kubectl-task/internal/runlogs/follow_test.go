package runlogs

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// blockingStream yields data, then blocks, as a followed log does, until
// its context ends.
type blockingStream struct {
	ctx  context.Context
	data *strings.Reader
}

func (b *blockingStream) Read(p []byte) (int, error) {
	if b.data.Len() > 0 {
		return b.data.Read(p)
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *blockingStream) Close() error { return nil }

func TestFollowUntilContainerEnds(t *testing.T) {
	const whole = "one\ntwo\nthree\n"
	tests := map[string]struct {
		// streamed is what the followed stream delivers before it blocks
		// (or ends, with endsItself).
		streamed   string
		endsItself bool
		want       string
		wantReopen bool
	}{
		"a stream the kubelet ends: read as it is": {
			streamed: whole, endsItself: true, want: whole,
		},
		"a stream left open after the container ended: cut, the rest read from the whole log": {
			streamed: "one\n", want: whole, wantReopen: true,
		},
		"a stream left open that had delivered everything": {
			streamed: whole, want: whole, wantReopen: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var reopened atomic.Bool
			open := func(ctx context.Context, follow bool) (io.ReadCloser, error) {
				if !follow {
					reopened.Store(true)
					return io.NopCloser(strings.NewReader(whole)), nil
				}
				if tc.endsItself {
					return io.NopCloser(strings.NewReader(tc.streamed)), nil
				}
				return &blockingStream{ctx: ctx, data: strings.NewReader(tc.streamed)}, nil
			}
			var looks atomic.Int32
			ended := func(context.Context) (bool, error) { return looks.Add(1) > 2, nil }

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			log, err := followUntilContainerEnds(ctx, 10*time.Millisecond, open, ended)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(log)
			if err != nil {
				t.Fatalf("reading the log: %v", err)
			}
			if err := log.Close(); err != nil {
				t.Errorf("closing the log: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("log mismatch (-want +got):\n%s", diff)
			}
			if reopened.Load() != tc.wantReopen {
				t.Errorf("whole log read again: %v, want %v", reopened.Load(), tc.wantReopen)
			}
		})
	}
}

// TestFollowUntilContainerEndsFollowsWhileRunning proves that a running
// container's stream is not cut, and that Close ends the watch.
func TestFollowUntilContainerEndsFollowsWhileRunning(t *testing.T) {
	open := func(ctx context.Context, follow bool) (io.ReadCloser, error) {
		if !follow {
			t.Error("the log was read again while its container ran")
		}
		return &blockingStream{ctx: ctx, data: strings.NewReader("one\n")}, nil
	}
	ended := func(context.Context) (bool, error) { return false, nil }
	log, err := followUntilContainerEnds(context.Background(), time.Millisecond, open, ended)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(log)
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("the log of a running container ended (%v)", err)
	case <-time.After(streamEndGrace + 500*time.Millisecond):
	}
	if err := log.Close(); err != nil {
		t.Errorf("closing the log: %v", err)
	}
	if err := <-read; err == nil {
		t.Error("reading a closed log still running ended without error")
	}
}
