package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func (p *plugin) newLogsCommand() *cobra.Command {
	var o runlogs.Options
	cmd := &cobra.Command{
		Use:   "logs RUN [-f] [--step NAME | --sidecar NAME]",
		Short: "Print the logs of a run's steps, in order, then its sidecars'",
		Long: `Print the logs of a run's steps, one step after another in the Task's order,
each line prefixed with [STEP], then what its sidecars wrote so far, each line
prefixed with [sidecar NAME]; --sidecar prints one sidecar's log, and with -f
follows it until it ends. Steps that have not started yet are not shown;
with -f, logs waits for each step in turn (and, for a run waiting for its Task,
for the Task) and follows it until the run finishes. A run that retries runs
its steps again in a Pod for each attempt: logs shows the current attempt's,
and with -f each later attempt's in turn, each after a line that marks it
("=== attempt 2 of 3, after attempt 1 failed ..."). A line longer than 64 KiB
is cut there, and marked "[line cut at 64 KiB]".`,
		Example: `  # Print what the run's steps have written so far
  kubectl task logs greet-x7k2p

  # Follow the step build until the run finishes
  kubectl task logs greet-x7k2p -f --step build

  # Print what the sidecar db wrote
  kubectl task logs greet-x7k2p --sidecar db`,
		Args:              exactlyOne("the name of a run"),
		ValidArgsFunction: p.completeRuns(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.runLogs(cmd, args[0], o)
		},
	}
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "Follow the logs until the run finishes")
	cmd.Flags().StringVar(&o.Step, "step", "", "Print only this step's log")
	cmd.Flags().StringVar(&o.Sidecar, "sidecar", "", "Print only this sidecar's log")
	cmd.MarkFlagsMutuallyExclusive("step", "sidecar")
	_ = cmd.RegisterFlagCompletionFunc("step", p.completeSteps)
	return cmd
}

func (p *plugin) runLogs(cmd *cobra.Command, name string, o runlogs.Options) error {
	ctx := cmd.Context()
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	if _, err := c.getRun(ctx, ns, name); err != nil {
		return err
	}
	printed, err := runlogs.Stream(ctx, p.LogSource(c, ns, name), p.Streams.Out, o)
	var unknownStep *runlogs.UnknownStepError
	if errors.As(err, &unknownStep) {
		return usageErrorf(cmd, "TaskRun %q has no step %q; its steps are: %s", name, o.Step, strings.Join(unknownStep.Steps, ", "))
	}
	var unknownSidecar *runlogs.UnknownSidecarError
	if errors.As(err, &unknownSidecar) {
		return usageErrorf(cmd, "TaskRun %q %s", name, strings.TrimPrefix(unknownSidecar.Error(), "the run "))
	}
	if err != nil {
		return clusterError(err, c.Host)
	}
	if printed > 0 {
		return nil
	}
	// Nothing to show: say why, on stderr, so that stdout stays the logs.
	run, err := c.getRun(ctx, ns, name)
	if err != nil {
		return err
	}
	switch {
	case o.Sidecar != "":
		fmt.Fprintf(p.Streams.ErrOut, "TaskRun %s: sidecar %s has not started\n", name, o.Sidecar)
	case runstate.Finished(run):
		// Followed too: a run can end waiting for its Task, say.
		fmt.Fprintf(p.Streams.ErrOut, "TaskRun %s ran no step: %s; see kubectl task describe %s -n %s\n", name, runstate.Summary(run), name, ns)
	case !o.Follow:
		fmt.Fprintf(p.Streams.ErrOut, "TaskRun %s has not started a step yet; follow it with: kubectl task logs %s -f -n %s\n", name, name, ns)
	}
	return nil
}
