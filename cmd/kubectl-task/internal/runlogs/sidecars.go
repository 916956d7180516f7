package runlogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/internal/runstate"
)

// SidecarSource is a Source whose runs may have sidecars (docs/sidecars.md):
// services beside the steps, whose logs Stream prints after the steps'.
type SidecarSource interface {
	Source
	// Sidecars returns the names of the sidecars of the attempt being
	// read, in order; none before it has a Pod.
	Sidecars(ctx context.Context) ([]string, error)
	// OpenSidecar returns the log of sidecar, as Open does a step's: with
	// follow, until its container ends. It returns ErrNotStarted for one
	// that has not started.
	OpenSidecar(ctx context.Context, sidecar string, follow bool) (io.ReadCloser, error)
}

// UnknownSidecarError says that Options.Sidecar names no sidecar of the run.
type UnknownSidecarError struct {
	// Sidecar is the name asked for; Sidecars are the run's sidecars.
	Sidecar  string
	Sidecars []string
}

func (e *UnknownSidecarError) Error() string {
	if len(e.Sidecars) == 0 {
		return fmt.Sprintf("the run has no sidecar %q; it has none", e.Sidecar)
	}
	return fmt.Sprintf("the run has no sidecar %q; its sidecars are: %s", e.Sidecar, strings.Join(e.Sidecars, ", "))
}

// SidecarPrefix is the prefix of each line of sidecar NAME's log:
// "[sidecar NAME] ", told from a step's "[STEP] " (a sidecar cannot have a
// step's name, but the word says what it is).
func SidecarPrefix(name string) string { return "[sidecar " + name + "] " }

// streamSidecars prints the logs of src's sidecars (only o.Sidecar's, if
// set), each line prefixed with SidecarPrefix, after the steps' logs: what
// they wrote so far, or, following o.Sidecar alone, until it ends. It
// returns how many it printed.
func streamSidecars(ctx context.Context, src Source, w io.Writer, o Options) (int, error) {
	sidecars, ok := src.(SidecarSource)
	if !ok {
		if o.Sidecar != "" {
			return 0, &UnknownSidecarError{Sidecar: o.Sidecar}
		}
		return 0, nil
	}
	names, err := sidecars.Sidecars(ctx)
	if err != nil {
		return 0, err
	}
	follow := false
	if o.Sidecar != "" {
		if !slices.Contains(names, o.Sidecar) {
			return 0, &UnknownSidecarError{Sidecar: o.Sidecar, Sidecars: names}
		}
		names, follow = []string{o.Sidecar}, o.Follow
	}
	printed := 0
	for _, name := range names {
		log, err := sidecars.OpenSidecar(ctx, name, follow)
		if errors.Is(err, ErrNotStarted) {
			continue
		}
		var gone *GoneError
		if errors.As(err, &gone) {
			if _, werr := fmt.Fprintf(w, "%s%s\n", SidecarPrefix(name), gone.Error()); werr != nil {
				return printed, werr
			}
			printed++
			continue
		}
		if err != nil {
			return printed, fmt.Errorf("reading the log of sidecar %q: %w", name, err)
		}
		err = copyLines(w, SidecarPrefix(name), log)
		_ = log.Close()
		if err != nil {
			return printed, fmt.Errorf("reading the log of sidecar %q: %w", name, err)
		}
		printed++
	}
	return printed, nil
}

var _ SidecarSource = (*PodSource)(nil)

// Sidecars returns the sidecars of the attempt's Pod, in order.
func (s *PodSource) Sidecars(ctx context.Context) ([]string, error) {
	_, pod, err := s.read(ctx)
	if err != nil || pod == nil {
		return nil, err
	}
	var names []string
	for _, sc := range runstate.Sidecars(pod) {
		names = append(names, sc.Name)
	}
	return names, nil
}

// OpenSidecar opens the log of sidecar's container, once it has started.
func (s *PodSource) OpenSidecar(ctx context.Context, sidecar string, follow bool) (io.ReadCloser, error) {
	_, pod, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	container := sidecarContainerOf(pod, sidecar)
	if container == "" || !containerStarted(pod, container) {
		return nil, ErrNotStarted
	}
	log, err := s.openLog(ctx, pod, container, follow)
	if err != nil {
		if why := s.whyGone(ctx, pod, err); why != "" {
			return nil, &GoneError{Step: sidecar, Why: why}
		}
		return nil, err
	}
	return log, nil
}

// sidecarContainerOf returns the container of pod that runs sidecar, "" for
// none.
func sidecarContainerOf(pod *corev1.Pod, sidecar string) string {
	if pod == nil {
		return ""
	}
	for _, sc := range runstate.Sidecars(pod) {
		if sc.Name == sidecar {
			return sc.Container
		}
	}
	return ""
}
