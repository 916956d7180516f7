// Package runlogs prints the logs of a TaskRun's steps, one step after
// another in the Task's order, each line prefixed with its step's name. Where
// the logs come from is behind Source, so that the order is proven against a
// fake and the Pod logs API is only one implementation.
package runlogs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrNotStarted says that a step has not run and, as far as the Source can
// tell, will not run before the caller stops asking: later steps have not run
// either, so Stream stops there.
var ErrNotStarted = errors.New("step has not started")

// Source gives the steps of one run and the log of each.
type Source interface {
	// Steps returns the run's step names, in the order they run; none while
	// they are not known (the run's Task does not exist). With follow, it
	// waits until they are known or the run has finished.
	Steps(ctx context.Context, follow bool) ([]string, error)
	// Open returns the log of step. With follow, it waits until the step has
	// started, and the log ends when the step's container ends; without, it
	// returns what the step has written so far. It returns ErrNotStarted for a
	// step that has not started (with follow: that the run ended without).
	Open(ctx context.Context, step string, follow bool) (io.ReadCloser, error)
}

// Attempts is a Source for a run that may try again, each attempt running
// the steps in a Pod of its own: Stream reads one attempt's steps, then,
// following, the next attempt's.
type Attempts interface {
	Source
	// NextAttempt moves the Source onto the attempt to read: at the first
	// call, the run's current one; then, with follow, the next one, once
	// the run has begun it. ok is false when there is none to read: without
	// follow, or once the run has finished without another attempt. mark,
	// if set, is a line that says which attempt begins.
	NextAttempt(ctx context.Context, follow bool) (mark string, ok bool, err error)
}

// GoneError says that a step's log cannot be read, and will not be, for a
// reason that is no error of the plugin's or the user's: the Pod it was in is
// gone, or its node is (deleted, shut down, or not ready, so that no kubelet
// serves it). Stream prints it in the step's place and ends the attempt
// there: the later steps' logs are gone with it.
type GoneError struct {
	// Step is the step whose log is gone; Why says why.
	Step, Why string
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("(log gone: %s)", e.Why)
}

// UnknownStepError says that Options.Step names no step of the run.
type UnknownStepError struct {
	// Step is the name asked for; Steps are the run's steps.
	Step  string
	Steps []string
}

func (e *UnknownStepError) Error() string {
	return fmt.Sprintf("the run has no step %q; its steps are: %s", e.Step, strings.Join(e.Steps, ", "))
}

// Options select what Stream prints.
type Options struct {
	// Step, if set, prints only that step's log.
	Step string
	// Sidecar, if set, prints only that sidecar's log (not with Step).
	Sidecar string
	// Follow keeps printing until the steps' containers end.
	Follow bool
}

// Stream prints the logs of src's steps to w in order, each line prefixed with
// "[STEP] ". A step is opened only once the one before it has been read to its
// end, so that lines never interleave across steps. It returns how many steps
// (and sidecars) it printed; it stops, without error, at the first step that
// has not started, and at the first whose log is gone (GoneError), which it
// says in that step's place. Then it prints what the run's sidecars wrote so
// far, if src is a SidecarSource, each line prefixed "[sidecar NAME] ": a
// sidecar's log says why a run whose steps never started failed.
// For an Attempts source it does so for one attempt after another (one only,
// without following), each after the line that marks its start.
func Stream(ctx context.Context, src Source, w io.Writer, o Options) (int, error) {
	attempts, ok := src.(Attempts)
	if !ok {
		return streamSteps(ctx, src, w, o)
	}
	printed := 0
	for {
		mark, ok, err := attempts.NextAttempt(ctx, o.Follow)
		if err != nil || !ok {
			return printed, err
		}
		if mark != "" {
			if _, err := fmt.Fprintln(w, mark); err != nil {
				return printed, err
			}
		}
		n, err := streamSteps(ctx, src, w, o)
		printed += n
		if err != nil {
			return printed, err
		}
	}
}

// streamSteps prints the logs of the steps src reads now, as Stream does,
// then its sidecars' (streamSidecars), unless o asks for one step; o's
// sidecar alone if it asks for one.
func streamSteps(ctx context.Context, src Source, w io.Writer, o Options) (int, error) {
	if o.Sidecar != "" {
		return streamSidecars(ctx, src, w, o)
	}
	printed, err := streamStepLogs(ctx, src, w, o)
	if err != nil || o.Step != "" {
		return printed, err
	}
	n, err := streamSidecars(ctx, src, w, o)
	return printed + n, err
}

// streamStepLogs prints the logs of the steps src reads now.
func streamStepLogs(ctx context.Context, src Source, w io.Writer, o Options) (int, error) {
	steps, err := src.Steps(ctx, o.Follow)
	if err != nil {
		return 0, err
	}
	if o.Step != "" {
		if !slices.Contains(steps, o.Step) {
			return 0, &UnknownStepError{Step: o.Step, Steps: steps}
		}
		steps = []string{o.Step}
	}
	printed := 0
	for _, step := range steps {
		log, err := src.Open(ctx, step, o.Follow)
		if errors.Is(err, ErrNotStarted) {
			return printed, nil
		}
		var gone *GoneError
		if errors.As(err, &gone) {
			if _, werr := fmt.Fprintf(w, "[%s] %s\n", step, gone.Error()); werr != nil {
				return printed, werr
			}
			return printed + 1, nil
		}
		if err != nil {
			return printed, fmt.Errorf("reading the log of step %q: %w", step, err)
		}
		err = copyLines(w, "["+step+"] ", log)
		_ = log.Close()
		if errors.As(err, &gone) {
			// Gone while followed (its node lost): said after what came.
			if _, werr := fmt.Fprintf(w, "[%s] %s\n", step, gone.Error()); werr != nil {
				return printed, werr
			}
			return printed + 1, nil
		}
		if err != nil {
			return printed, fmt.Errorf("reading the log of step %q: %w", step, err)
		}
		printed++
	}
	return printed, nil
}

// MaxLineBytes bounds each line of a step's log that Stream prints, its
// newline included; docs/kubectl-task.md documents it. A longer line is cut
// there, on a character boundary, and ends with CutMark; the rest of it is
// read and dropped as it arrives, never held, so that a step writing
// gigabytes without a newline cannot exhaust the plugin's memory.
const MaxLineBytes = 64 << 10

// CutMark ends a line cut at MaxLineBytes.
const CutMark = " [line cut at 64 KiB]"

// copyLines copies r to w line by line, each line prefixed. A last line
// without a newline gets one, so that the next step's first line starts on a
// line of its own. Lines are cut at MaxLineBytes.
func copyLines(w io.Writer, prefix string, r io.Reader) error {
	br := bufio.NewReaderSize(r, MaxLineBytes)
	out := make([]byte, 0, len(prefix)+MaxLineBytes+len(CutMark)+1)
	cutting := false // dropping the rest of a line already printed, cut
	for {
		// ReadSlice returns at most MaxLineBytes, from the reader's own
		// buffer: a line is never gathered whole.
		chunk, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if len(chunk) > 0 && !cutting {
			out = append(append(out[:0], prefix...), chunk...)
			if full {
				out = append(trimSplitRune(out), CutMark...)
			}
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
		}
		cutting = full
		switch {
		case full:
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}

// trimSplitRune drops the start of a UTF-8 character that b ends in the
// middle of, as a cut may leave it.
func trimSplitRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
