package runlogs

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
		"a stream the kubelet ends with its container: read as it is, the whole log looked at past it": {
			streamed: whole, endsItself: true, want: whole, wantReopen: true,
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
			log, err := followUntilContainerEnds(ctx, 10*time.Millisecond, open, ended, nil)
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
	log, err := followUntilContainerEnds(context.Background(), time.Millisecond, open, ended, nil)
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

// kubeletDown is the API server's answer for a log whose kubelet it cannot
// reach.
var kubeletDown = apierrors.NewInternalError(errors.New(`dial tcp 127.0.0.1:10250: connect: connection refused`))

// TestFollowResumesABrokenStream: a stream that ends while its container
// runs (its kubelet restarting) is followed again, once the kubelet serves
// it (the API server cannot reach it, then it has not found its containers
// yet), past what it had delivered: every line once, in order.
func TestFollowResumesABrokenStream(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods/log"}, "p")
	refusals := map[string]func() (io.ReadCloser, error){
		"unreachable":   func() (io.ReadCloser, error) { return nil, kubeletDown },
		"not found yet": func() (io.ReadCloser, error) { return nil, notFound },
		"the kubelet's message in place of the log": func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("unable to retrieve container logs for containerd://0123")), nil
		},
	}
	for name, refuse := range refusals {
		t.Run(name, func(t *testing.T) { followAfterRefusal(t, refuse) })
	}
}

func followAfterRefusal(t *testing.T, refuse func() (io.ReadCloser, error)) {
	var opens atomic.Int32
	var ended atomic.Bool
	open := func(ctx context.Context, follow bool) (io.ReadCloser, error) {
		if !follow {
			return io.NopCloser(strings.NewReader("one\ntwo\nthree\n")), nil
		}
		switch opens.Add(1) {
		case 1:
			return io.NopCloser(strings.NewReader("one\n")), nil
		case 2:
			return refuse()
		default:
			ended.Store(true)
			return io.NopCloser(strings.NewReader("one\ntwo\nthree\n")), nil
		}
	}
	log, err := followUntilContainerEnds(context.Background(), 10*time.Millisecond, open,
		func(context.Context) (bool, error) { return ended.Load(), nil }, nil)
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
	if diff := cmp.Diff("one\ntwo\nthree\n", string(got)); diff != "" {
		t.Errorf("log mismatch (-want +got):\n%s", diff)
	}
	if n := opens.Load(); n != 3 {
		t.Errorf("the log was followed %d times, want 3: broken off, refused, followed again", n)
	}
}

// TestFollowReportsALogGoneWithItsNode: a stream that ends while its
// container runs, and cannot be opened again, ends in a GoneError once its
// node is known lost.
func TestFollowReportsALogGoneWithItsNode(t *testing.T) {
	var opens atomic.Int32
	open := func(ctx context.Context, follow bool) (io.ReadCloser, error) {
		if opens.Add(1) == 1 {
			return io.NopCloser(strings.NewReader("one\n")), nil
		}
		return nil, kubeletDown
	}
	var looks atomic.Int32
	gone := func(_ context.Context, err error) string {
		if !errors.Is(err, kubeletDown) {
			t.Errorf("asked whether a log is gone for %v", err)
		}
		if looks.Add(1) < 3 {
			return ""
		}
		return `Pod "p" is on node "n", and the node is not ready`
	}
	log, err := followUntilContainerEnds(context.Background(), 10*time.Millisecond, open,
		func(context.Context) (bool, error) { return false, nil }, gone)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(log)
	var goneErr *GoneError
	if !errors.As(err, &goneErr) || goneErr.Why != `Pod "p" is on node "n", and the node is not ready` {
		t.Errorf("reading the log ended with %v, want it gone with its node", err)
	}
	if string(got) != "one\n" {
		t.Errorf("read %q before it was gone, want %q", got, "one\n")
	}
	_ = log.Close()
}
