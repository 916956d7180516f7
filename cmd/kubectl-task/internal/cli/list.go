package cli

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// listFlags are list's flags.
type listFlags struct {
	output        string
	allNamespaces bool
	selector      string
}

func (p *plugin) newListCommand() *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:   "list [TASK]",
		Short: "List runs, newest first",
		Long: `List runs, newest first, with when each started, how long it took and how it
ended: Succeeded, or Failed(REASON). A run that goes on shows where it is:
Pending, WaitingForTask, Running, Retrying or Cancelling. When a run listed
may retry (spec.retries), an ATTEMPT column shows each run's attempt and how
many it may make: 2/3 is the second of three. -l selects runs by their
labels, as kubectl get -l does.`,
		Example: `  # List the runs of every Task in the current namespace
  kubectl task list

  # List the runs of the Task greet, as names only
  kubectl task list greet -o name

  # List the runs in every namespace
  kubectl task list -A

  # List the runs labelled team=platform (as start -l team=platform labels them)
  kubectl task list -l team=platform`,
		Aliases:           []string{"ls"},
		Args:              atMostOne("the name of a Task"),
		ValidArgsFunction: p.completeTasks,
		RunE: func(cmd *cobra.Command, args []string) error {
			task := ""
			if len(args) == 1 {
				task = args[0]
			}
			return p.runList(cmd, task, f)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "Output format: json, yaml or name (default: a table)")
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "List the runs in every namespace")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "A label selector, as kubectl takes it: -l team=platform, -l 'env in (dev,test)', -l '!draft'")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml", "name"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (p *plugin) runList(cmd *cobra.Command, task string, f listFlags) error {
	var printer printers.ResourcePrinter
	switch f.output {
	case "":
	case "json":
		printer = &printers.JSONPrinter{}
	case "yaml":
		printer = &printers.YAMLPrinter{}
	case "name":
		printer = &printers.NamePrinter{}
	default:
		return usageErrorf(cmd, "unknown output format %q; use -o json, -o yaml or -o name", f.output)
	}
	var opts []client.ListOption
	if f.selector != "" {
		sel, err := parseSelector(cmd, f.selector)
		if err != nil {
			return err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	ctx := cmd.Context()
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	if !f.allNamespaces {
		opts = append(opts, client.InNamespace(ns))
	}
	runs, err := c.listRuns(ctx, task, opts...)
	if err != nil {
		return err
	}
	if len(runs) == 0 && task != "" && !f.allNamespaces {
		// No runs of a Task that does not exist is most likely a typo.
		if _, err := c.getTask(ctx, ns, task); err != nil {
			return err
		}
	}
	sortNewestFirst(runs)

	if printer != nil {
		return printRuns(p.Streams.Out, printer, f.output, runs)
	}
	if len(runs) == 0 {
		which := "No runs"
		if task != "" {
			which += fmt.Sprintf(" of Task %q", task)
		}
		if f.selector != "" {
			which += fmt.Sprintf(" matching -l %s", f.selector)
		}
		where := fmt.Sprintf("in namespace %q", ns)
		if f.allNamespaces {
			where = "in any namespace"
		}
		fmt.Fprintf(p.Streams.ErrOut, "%s %s.\n", which, where)
		return nil
	}
	return p.printRunTable(p.Streams.Out, runs, f.allNamespaces)
}

// sortNewestFirst orders runs newest first, as runinfo.NewestFirst does.
func sortNewestFirst(runs []v1.TaskRun) {
	sort.SliceStable(runs, func(i, j int) bool { return runinfo.NewestFirst(&runs[i], &runs[j]) < 0 })
}

func (p *plugin) printRunTable(out io.Writer, runs []v1.TaskRun, withNamespace bool) error {
	// Runs that may retry are the exception; the column shows only with one.
	withAttempt := slices.ContainsFunc(runs, func(run v1.TaskRun) bool { return mayRetry(&run) })
	w := newTabWriter(out)
	if withNamespace {
		fmt.Fprint(w, "NAMESPACE\t")
	}
	fmt.Fprint(w, "NAME\tTASK\tSTARTED\tDURATION\t")
	if withAttempt {
		fmt.Fprint(w, "ATTEMPT\t")
	}
	fmt.Fprintln(w, "STATUS")
	now := p.Now()
	for i := range runs {
		run := &runs[i]
		if withNamespace {
			fmt.Fprintf(w, "%s\t", run.Namespace)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t", run.Name, run.Spec.TaskRef.Name, ago(run.Status.StartTime, now), runDuration(run))
		if withAttempt {
			fmt.Fprintf(w, "%d/%d\t", attempt(run), maxAttempts(run))
		}
		fmt.Fprintln(w, runstate.Summary(run))
	}
	return w.Flush()
}

// mayRetry reports whether a run asks for retries, or has made more than one
// attempt all the same (its retries are gone from its spec, say).
func mayRetry(run *v1.TaskRun) bool {
	return (run.Spec.Retries != nil && *run.Spec.Retries > 0) || len(run.Status.Attempts) > 0
}

// attempt is the number of the run's current (or last) attempt, from 1:
// one more than the earlier attempts its status lists.
func attempt(run *v1.TaskRun) int {
	return len(run.Status.Attempts) + 1
}

// maxAttempts is how many attempts the run may make, as the controller counts
// them, or the attempt it is on if that is more (its retries were lowered
// after it made them, say).
func maxAttempts(run *v1.TaskRun) int {
	return max(runstate.AttemptsAllowed(run), attempt(run))
}

// printRuns prints runs with a kubectl printer: json and yaml as one
// TaskRunList, name as one taskrun.minitask.dev/NAME line per run.
func printRuns(out io.Writer, printer printers.ResourcePrinter, format string, runs []v1.TaskRun) error {
	gvk := v1.GroupVersion.WithKind("TaskRun")
	for i := range runs {
		runs[i].SetGroupVersionKind(gvk)
		runs[i].ManagedFields = nil
	}
	if format == "name" {
		for i := range runs {
			if err := printer.PrintObj(&runs[i], out); err != nil {
				return err
			}
		}
		return nil
	}
	list := &v1.TaskRunList{Items: runs}
	if list.Items == nil {
		list.Items = []v1.TaskRun{}
	}
	list.SetGroupVersionKind(v1.GroupVersion.WithKind("TaskRunList"))
	return printer.PrintObj(list, out)
}
