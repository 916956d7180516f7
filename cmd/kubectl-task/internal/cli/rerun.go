package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runops"
)

// rerunFlags are rerun's flags.
type rerunFlags struct {
	name   string
	follow followFlags
}

func (p *plugin) newRerunCommand() *cobra.Command {
	var f rerunFlags
	cmd := &cobra.Command{
		Use:   "rerun RUN",
		Short: "Start a new run with the settings of an earlier one",
		Long: `Start a new run of the same Task with the settings of RUN: its params,
workspaces, ServiceAccount, Pod template, timeout, retries, retryOn, TTL and
labels. The new run gets a new name, TASK-xxxxx as start names runs, or
--name. It does not take RUN's status, nor a cancel request (spec.status),
nor the labels the controller sets; RUN itself is left as it is, finished or
not.

To change a setting on the way, start the Task with --last and the flags
that differ: kubectl task start TASK --last -p NAME=VALUE.`,
		Example: `  # Run greet-x7k2p's Task again, as greet-x7k2p ran it, and follow the logs
  kubectl task rerun greet-x7k2p --showlog`,
		Args:              exactlyOne("the name of a run"),
		ValidArgsFunction: p.completeRuns(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.runRerun(cmd.Context(), args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.name, "name", "", "The new TaskRun's name (default: generated, TASK-xxxxx)")
	f.follow.addFlags(cmd)
	return cmd
}

func (p *plugin) runRerun(ctx context.Context, name string, f rerunFlags) error {
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	earlier, err := c.getRun(ctx, ns, name)
	if err != nil {
		return err
	}
	// A run of a Task that is gone would wait for it; one that misses a
	// value the Task now requires, or gives one of another type than the
	// Task now declares, would fail at once. Say so, create nothing.
	task, err := c.getTask(ctx, ns, earlier.Spec.TaskRef.Name)
	if err != nil {
		return err
	}
	run, err := runops.RerunOf(earlier, task, f.name)
	var missing *runops.MissingParamsError
	if errors.As(err, &missing) {
		return fmt.Errorf("Task %q now needs a value for %s, which TaskRun %s does not give; start it with: kubectl task start %s --last -p NAME=VALUE", //nolint:staticcheck // the kind Task, as users see it
			task.Name, quotedList("param", missing.Missing), name, task.Name)
	}
	var wrong *runops.WrongTypeParamsError
	if errors.As(err, &wrong) {
		return fmt.Errorf("Task %q now declares params of other types than TaskRun %s's values (%s); start it with: kubectl task start %s --last -p NAME=VALUE", //nolint:staticcheck // the kind Task, as users see it
			task.Name, name, strings.Join(wrong.Problems, "; "), task.Name)
	}
	if err != nil {
		return err
	}
	return p.createAndFollow(ctx, c, run, name, f.follow)
}

// quotedList is `param "a"` or `params "a", "b"`.
func quotedList(noun string, names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return plural(len(names), noun, noun+"s") + " " + strings.Join(quoted, ", ")
}
