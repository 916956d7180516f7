package cli

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runops"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// deleteFlags are delete's flags.
type deleteFlags struct {
	task      string
	keep      int
	keepSince string
	dryRun    bool
}

func (p *plugin) newDeleteCommand() *cobra.Command {
	var f deleteFlags
	cmd := &cobra.Command{
		Use:   "delete --task TASK [--keep N] [--keep-since DURATION] [--dry-run]",
		Short: "Delete the finished runs of a Task beyond the newest, or finished long ago",
		Long: `Delete finished runs of a Task, and with them their Pods: those beyond the N
newest finished runs (--keep N, newest as list orders them, by start), or
finished longer ago than DURATION (--keep-since 7d, 12h, 30m), or, with both,
those that are beyond the newest N and finished longer ago than DURATION. Runs
that go on are never deleted, nor counted in N. Each deleted run is listed,
oldest first.

With --dry-run the API server checks each deletion, your permissions
included, and deletes nothing.

To delete finished runs without a command, give them a TTL
(spec.ttlSecondsAfterFinished), or run the manager with
--default-ttl-after-finished.`,
		Example: `  # Keep the 10 newest finished runs of build, delete its other finished runs
  kubectl task delete --task build --keep 10

  # Delete the runs of build that finished more than a week ago; show them first
  kubectl task delete --task build --keep-since 7d --dry-run
  kubectl task delete --task build --keep-since 7d`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "%s takes no run names but --task TASK; delete one run with: kubectl delete taskrun NAME", cmd.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return p.runDelete(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.task, "task", "", "The Task whose finished runs to delete (required)")
	fl.IntVar(&f.keep, "keep", 0, "Keep the N newest finished runs")
	fl.StringVar(&f.keepSince, "keep-since", "", "Keep the runs that finished within DURATION, e.g. 7d, 12h or 30m")
	fl.BoolVar(&f.dryRun, "dry-run", false, "Say what would be deleted, with the API server checking each deletion; delete nothing")
	_ = cmd.RegisterFlagCompletionFunc("task", p.completeTasks)
	return cmd
}

// pruneRule says which finished runs delete keeps.
type pruneRule struct {
	// keep, if set, is how many of the newest finished runs are kept.
	keep *int
	// since, if set, keeps the runs that finished at or after it.
	since *time.Time
}

// prune reports whether a finished run, the rank-th newest (from 0), goes:
// beyond every limit that is set.
func (r pruneRule) prune(rank int, finished time.Time) bool {
	if r.keep != nil && rank < *r.keep {
		return false
	}
	if r.since != nil && !finished.Before(*r.since) {
		return false
	}
	return true
}

func (p *plugin) runDelete(cmd *cobra.Command, f deleteFlags) error {
	if f.task == "" {
		return usageErrorf(cmd, "delete needs --task TASK, the Task whose finished runs to delete")
	}
	var rule pruneRule
	if cmd.Flags().Changed("keep") {
		if f.keep < 0 {
			return usageErrorf(cmd, "--keep %d: it needs a number of runs, 0 or more", f.keep)
		}
		rule.keep = &f.keep
	}
	if cmd.Flags().Changed("keep-since") {
		age, err := parseAge(f.keepSince)
		if err != nil {
			return usageErrorf(cmd, "--keep-since %q is not a duration such as 7d, 12h or 30m", f.keepSince)
		}
		since := p.Now().Add(-age)
		rule.since = &since
	}
	if rule.keep == nil && rule.since == nil {
		return usageErrorf(cmd, "delete needs --keep N, --keep-since DURATION or both, to say which finished runs of %q to keep", f.task)
	}

	ctx := cmd.Context()
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	runs, err := c.listRuns(ctx, f.task, client.InNamespace(ns))
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		// No runs of a Task that does not exist is most likely a typo; the
		// runs of a Task deleted since are still deleted.
		if _, err := c.getTask(ctx, ns, f.task); err != nil {
			return err
		}
	}
	sortNewestFirst(runs)

	var doomed []*v1.TaskRun
	finished, goingOn := 0, 0
	for i := range runs {
		run := &runs[i]
		if !runstate.Finished(run) {
			goingOn++
			continue
		}
		if rule.prune(finished, finishedAt(run)) {
			doomed = append(doomed, run)
		}
		finished++
	}
	return p.deleteRuns(ctx, c, f, doomed, finished-len(doomed), goingOn)
}

// deleteRuns deletes doomed, oldest first, listing each, then sums up.
func (p *plugin) deleteRuns(ctx context.Context, c *Clients, f deleteFlags, doomed []*v1.TaskRun, kept, goingOn int) error {
	out := p.Streams.Out
	verb := "deleted"
	if f.dryRun {
		verb = "would be deleted"
	}
	deleted := 0
	for i := len(doomed) - 1; i >= 0; i-- {
		run := doomed[i]
		// The UID keeps a run made again under the same name since the list.
		err := runops.Delete(ctx, c.Client, run, f.dryRun)
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			fmt.Fprintf(out, "TaskRun %s was already gone\n", run.Name)
			continue
		case err != nil:
			return fmt.Errorf("deleting TaskRun %s, after %d of %d: %w", run.Name, deleted, len(doomed), clusterError(err, c.Host))
		}
		deleted++
		fmt.Fprintf(out, "TaskRun %s %s (%s, finished %s)\n", run.Name, verb, runstate.Summary(run), since(finishedAt(run), p.Now())+" ago")
	}
	keptText := fmt.Sprintf("kept %d finished %s and %d that %s on", kept, plural(kept, "run", "runs"), goingOn, plural(goingOn, "goes", "go"))
	switch {
	case len(doomed) == 0:
		fmt.Fprintf(out, "No runs of Task %q to delete; %s\n", f.task, keptText)
	case f.dryRun:
		fmt.Fprintf(out, "%d %s of Task %q would be deleted; %s. Dry run: nothing was deleted\n", deleted, plural(deleted, "run", "runs"), f.task, keptText)
	default:
		fmt.Fprintf(out, "Deleted %d %s of Task %q; %s\n", deleted, plural(deleted, "run", "runs"), f.task, keptText)
	}
	return nil
}

// finishedAt is when a finished run finished (runstate.FinishedAt).
func finishedAt(run *v1.TaskRun) time.Time {
	t, _ := runstate.FinishedAt(run)
	return t
}

// maxAgeDays is the most days a time.Duration holds, about 292 years. More
// would wrap around to a negative age, a cutoff in the future, and delete
// would take every finished run.
const maxAgeDays = math.MaxInt64 / int64(24*time.Hour)

// parseAge reads a duration as a Go duration (12h, 30m, 1h30m) or a number
// of days (7d), which Go's durations lack; it is not negative. A duration
// too long for a time.Duration is malformed (time.ParseDuration says so
// itself).
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || n > maxAgeDays {
			return 0, fmt.Errorf("malformed days %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("malformed duration %q", s)
	}
	return d, nil
}
