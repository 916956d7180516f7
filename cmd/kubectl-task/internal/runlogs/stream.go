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
	// Follow keeps printing until the steps' containers end.
	Follow bool
}

// Stream prints the logs of src's steps to w in order, each line prefixed with
// "[STEP] ". A step is opened only once the one before it has been read to its
// end, so that lines never interleave across steps. It returns how many steps
// it printed; it stops, without error, at the first step that has not started.
func Stream(ctx context.Context, src Source, w io.Writer, o Options) (int, error) {
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
		if err != nil {
			return printed, fmt.Errorf("reading the log of step %q: %w", step, err)
		}
		err = copyLines(w, "["+step+"] ", log)
		_ = log.Close()
		if err != nil {
			return printed, fmt.Errorf("reading the log of step %q: %w", step, err)
		}
		printed++
	}
	return printed, nil
}

// copyLines copies r to w line by line, each line prefixed. A last line
// without a newline gets one, so that the next step's first line starts on a
// line of its own.
func copyLines(w io.Writer, prefix string, r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			if _, werr := io.WriteString(w, prefix+line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
