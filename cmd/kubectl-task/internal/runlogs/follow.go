package runlogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// streamEndGrace is how long a followed log may stay open after its
// container has ended before followUntilEnded cuts it: a kubelet ends the
// stream itself within moments of the container's exit.
const streamEndGrace = 2 * time.Second

// followUntilEnded follows the log of a running container and makes sure the
// log ends once the container has, and only then. A kubelet ends a followed
// stream when the container exits, but not every implementation of the kubelet
// API does: kwok, which plays the kubelet in the local cluster, keeps it open
// for good. So the Pod is watched too; once the container has ended, and the
// stream has not ended within streamEndGrace, it is cut, and the rest is read
// from the container's log, complete now, past the bytes the stream had
// delivered. And a kubelet also ends the stream when it stops itself (a
// restart, a crash, its node going down) while the container may run on: a
// stream that ends before its container is followed again, past those bytes,
// once it can be, or reported gone with its node (resume).
type followUntilEnded struct {
	// open opens the container's log, following it or not.
	open func(ctx context.Context, follow bool) (io.ReadCloser, error)
	// ended reports whether the container has ended.
	ended func(ctx context.Context) (bool, error)
	// gone says why the log is gone for good, given why it could not be
	// opened; "" when it is not known to be.
	gone     func(ctx context.Context, err error) string
	interval time.Duration
	ctx      context.Context
	// streamCtx is the followed streams', which cancel ends.
	streamCtx context.Context
	cancel    context.CancelFunc
	// cut is closed when the watcher cut the stream.
	cut chan struct{}
	// watcherDone is closed when the watcher has returned.
	watcherDone chan struct{}

	// delivered counts the bytes the streams gave; only Read uses it.
	delivered int64

	// mu guards stream and rest, which Read sets and Close, maybe called
	// meanwhile from another goroutine, closes.
	mu        sync.Mutex
	stream    io.ReadCloser
	rest      io.ReadCloser
	closed    bool
	closeOnce sync.Once
}

// followUntilContainerEnds opens a log with follow, through open, and returns it
// wrapped so that it ends once ended reports, polled every interval, that the
// container has ended. gone, if set, says why a log that can no longer be
// opened is gone for good; Read then returns a *GoneError.
func followUntilContainerEnds(ctx context.Context, interval time.Duration,
	open func(ctx context.Context, follow bool) (io.ReadCloser, error),
	ended func(ctx context.Context) (bool, error),
	gone func(ctx context.Context, err error) string,
) (io.ReadCloser, error) {
	streamCtx, cancel := context.WithCancel(ctx)
	stream, err := open(streamCtx, true)
	if err != nil {
		cancel()
		return nil, err
	}
	if gone == nil {
		gone = func(context.Context, error) string { return "" }
	}
	f := &followUntilEnded{
		stream: newServedLog(stream), open: open, ended: ended, gone: gone, interval: interval,
		ctx: ctx, streamCtx: streamCtx, cancel: cancel,
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
	for {
		if rest := f.restStream(); rest != nil {
			return rest.Read(p)
		}
		n, err := f.currentStream().Read(p)
		f.delivered += int64(n)
		switch {
		case err == nil, n > 0 && errors.Is(err, io.EOF):
			return n, nil
		case errors.Is(err, io.EOF), errors.Is(err, errNotServed):
			if err := f.resume(); err != nil {
				return 0, err
			}
			continue
		}
		select {
		case <-f.cut:
		default:
			return n, err
		}
		// The watcher cut the stream: read the rest from the whole log.
		if rerr := f.readRest(); rerr != nil {
			return n, rerr
		}
		if n > 0 {
			return n, nil
		}
	}
}

// resume is called when the followed stream ended by itself. It is the log's
// end once the container is seen ended, within streamEndGrace (its Pod's
// status may trail the kubelet's stream): the rest, should the stream have
// missed any, is then read from the whole log. Otherwise the kubelet went
// away (a restart, say) and the container may run on: the log is followed
// again, past what was delivered, as soon as the kubelet serves it, or until
// the log is gone for good (the Pod gone, or its node lost: a GoneError).
func (f *followUntilEnded) resume() error {
	broke := time.Now()
	for {
		select {
		case <-f.cut:
			return f.readRest()
		default:
		}
		if done, err := f.ended(f.ctx); err == nil && done {
			return f.readRest()
		}
		if time.Since(broke) >= streamEndGrace {
			stream, err := f.openPast(f.streamCtx, true)
			if err == nil {
				return f.setStream(stream)
			}
			if why := f.gone(f.ctx, err); why != "" {
				return &GoneError{Why: why}
			}
			if f.streamCtx.Err() == nil && !kubeletNotServing(err) {
				return fmt.Errorf("following a log again after its stream broke off: %w", err)
			}
		}
		select {
		case <-f.ctx.Done():
			return f.ctx.Err()
		case <-time.After(f.interval):
		}
	}
}

// readRest makes the rest of the ended container's whole log, past what the
// streams delivered, what Read reads from now on; it waits for a kubelet
// that cannot serve it yet.
func (f *followUntilEnded) readRest() error {
	var rest io.ReadCloser
	for {
		var err error
		if rest, err = f.openPast(f.ctx, false); err == nil {
			break
		}
		if why := f.gone(f.ctx, err); why != "" {
			return &GoneError{Why: why}
		}
		if f.ctx.Err() != nil || !kubeletNotServing(err) {
			return fmt.Errorf("reading the rest of a log whose stream did not end with its container: %w", err)
		}
		select {
		case <-f.ctx.Done():
			return f.ctx.Err()
		case <-time.After(f.interval):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		_ = rest.Close()
		return errors.New("reading a closed log")
	}
	f.rest = rest
	return nil
}

// openPast opens the log and reads past the bytes already delivered. A log
// shorter than that (rotated away) is read from its end. It fails with
// errNotServed when the kubelet sent its message in place of the log.
func (f *followUntilEnded) openPast(ctx context.Context, follow bool) (io.ReadCloser, error) {
	opened, err := f.open(ctx, follow)
	if err != nil {
		return nil, err
	}
	log := newServedLog(opened)
	if err := log.check(); err != nil {
		_ = log.Close()
		return nil, err
	}
	if _, err := io.CopyN(io.Discard, log, f.delivered); err != nil && !errors.Is(err, io.EOF) {
		_ = log.Close()
		return nil, err
	}
	return log, nil
}

// setStream makes stream the one Read follows, in place of the one that
// broke off.
func (f *followUntilEnded) setStream(stream io.ReadCloser) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		_ = stream.Close()
		return errors.New("reading a closed log")
	}
	_ = f.stream.Close()
	f.stream = stream
	return nil
}

func (f *followUntilEnded) currentStream() io.ReadCloser {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stream
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
		f.mu.Lock()
		f.closed = true
		stream, rest := f.stream, f.rest
		f.mu.Unlock()
		err = stream.Close()
		if rest != nil {
			if rerr := rest.Close(); err == nil {
				err = rerr
			}
		}
	})
	return err
}

// kubeletNotServing reports whether err, from opening the log of a container
// whose Pod exists, is the API server's answer that the kubelet cannot serve
// it now, which may pass: a 5xx (the kubelet unreachable: restarting, or its
// node down), a NotFound (a kubelet just restarted, that has not found its
// containers again yet), or its message sent in place of the log
// (errNotServed); rather than a refusal (forbidden, a bad request) that
// will not.
func kubeletNotServing(err error) bool {
	var status apierrors.APIStatus
	return errors.Is(err, errNotServed) || apierrors.IsNotFound(err) ||
		errors.As(err, &status) && status.Status().Code >= http.StatusInternalServerError
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
