package runlogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// streamEndGrace is how long a followed log may stay open after its
// container has ended before followUntilEnded cuts it: a kubelet ends the
// stream itself within moments of the container's exit.
const streamEndGrace = 2 * time.Second

// followUntilEnded follows the log of a running container and makes sure the
// log ends once the container has. A kubelet ends a followed stream when the
// container exits, but not every implementation of the kubelet API does: kwok,
// which plays the kubelet in the local cluster, keeps it open for good. So the
// Pod is watched too; once the container has ended, and the stream has not
// ended within streamEndGrace, it is cut, and the rest is read from the
// container's log, complete now, past the bytes the stream had delivered.
type followUntilEnded struct {
	stream io.ReadCloser
	// reopen reads the ended container's whole log, without following.
	reopen func(ctx context.Context) (io.ReadCloser, error)
	ctx    context.Context
	cancel context.CancelFunc
	// cut is closed when the watcher cut the stream.
	cut chan struct{}
	// watcherDone is closed when the watcher has returned.
	watcherDone chan struct{}

	// delivered counts the bytes the stream gave; only Read uses it.
	delivered int64

	// mu guards rest, which Read sets and Close, maybe called meanwhile
	// from another goroutine, closes.
	mu        sync.Mutex
	rest      io.ReadCloser
	closed    bool
	closeOnce sync.Once
}

// followUntilContainerEnds opens a log with follow, through open, and returns it
// wrapped so that it ends once ended reports, polled every interval, that the
// container has ended.
func followUntilContainerEnds(ctx context.Context, interval time.Duration,
	open func(ctx context.Context, follow bool) (io.ReadCloser, error),
	ended func(ctx context.Context) (bool, error),
) (io.ReadCloser, error) {
	streamCtx, cancel := context.WithCancel(ctx)
	stream, err := open(streamCtx, true)
	if err != nil {
		cancel()
		return nil, err
	}
	f := &followUntilEnded{
		stream: stream,
		reopen: func(ctx context.Context) (io.ReadCloser, error) { return open(ctx, false) },
		ctx:    ctx, cancel: cancel,
		cut: make(chan struct{}), watcherDone: make(chan struct{}),
	}
	go f.watch(streamCtx, interval, ended)
	return f, nil
}

// watch cuts the stream once the container has ended and the grace has
// passed; it returns when the stream is closed.
func (f *followUntilEnded) watch(ctx context.Context, interval time.Duration, ended func(ctx context.Context) (bool, error)) {
	defer close(f.watcherDone)
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for wait(interval) {
		// A failed look is taken as "not ended": the stream goes on, as it
		// would without the watcher, and the next look may succeed.
		if done, err := ended(ctx); err == nil && done {
			if wait(streamEndGrace) {
				close(f.cut)
				f.cancel()
			}
			return
		}
	}
}

func (f *followUntilEnded) Read(p []byte) (int, error) {
	if rest := f.restStream(); rest != nil {
		return rest.Read(p)
	}
	n, err := f.stream.Read(p)
	f.delivered += int64(n)
	if err == nil || errors.Is(err, io.EOF) {
		return n, err
	}
	select {
	case <-f.cut:
	default:
		return n, err
	}
	// The watcher cut the stream: read the rest from the whole log.
	rest, rerr := f.reopen(f.ctx)
	if rerr != nil {
		return n, fmt.Errorf("reading the rest of a log whose stream did not end with its container: %w", rerr)
	}
	if _, rerr := io.CopyN(io.Discard, rest, f.delivered); rerr != nil && !errors.Is(rerr, io.EOF) {
		_ = rest.Close()
		return n, fmt.Errorf("reading the rest of a log whose stream did not end with its container: %w", rerr)
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		_ = rest.Close()
		return n, errors.New("reading a closed log")
	}
	f.rest = rest
	f.mu.Unlock()
	if n > 0 {
		return n, nil
	}
	return rest.Read(p)
}

func (f *followUntilEnded) restStream() io.ReadCloser {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rest
}

func (f *followUntilEnded) Close() error {
	var err error
	f.closeOnce.Do(func() {
		f.cancel()
		<-f.watcherDone
		err = f.stream.Close()
		f.mu.Lock()
		f.closed = true
		rest := f.rest
		f.mu.Unlock()
		if rest != nil {
			if rerr := rest.Close(); err == nil {
				err = rerr
			}
		}
	})
	return err
}

// containerEnded reports whether the container named name of pod has ended,
// or the Pod has: either way its log is complete.
func containerEnded(pod *corev1.Pod, name string) bool {
	if pod == nil || podEnded(pod) {
		return true
	}
	cs := containerStatus(pod, name)
	return cs != nil && cs.State.Terminated != nil
}
