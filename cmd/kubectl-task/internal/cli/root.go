// Package cli is the kubectl task plugin: a cobra command tree over the
// minitask v1 API, with the usual kubectl connection flags.
package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// Options are what the plugin takes from its surroundings; tests replace them.
type Options struct {
	// Streams are where commands read and write.
	Streams genericiooptions.IOStreams
	// Now is the clock relative times are measured with; nil means time.Now.
	Now func() time.Time
	// PollInterval is how often following logs looks again at a step that
	// has not started, or a run that waits for its Task; 0 means a second.
	// Waiting for a run to finish watches it instead.
	PollInterval time.Duration
	// LogSource returns where a run's step logs come from; nil means its
	// Pod, through the Pod logs API.
	LogSource func(c *Clients, namespace, run string) runlogs.Source
}

// plugin is the state every command shares: the options, the connection
// flags, and the clients built from them once the flags are parsed.
type plugin struct {
	Options
	flags   *genericclioptions.ConfigFlags
	clients *Clients
}

const rootHelp = `kubectl task starts minitask Tasks and follows their runs (TaskRuns).

It uses your kubeconfig as kubectl does: --kubeconfig, --context and
-n/--namespace work as they do there, and so do kubectl's other connection
flags (--server, --token, --as, ...), which help does not list. It reads and
writes minitask.dev/v1 only, which minitask serves from release 5 on; against
an older minitask it says so and does nothing.

Exit codes:
  0    success
  1    an error (unknown Task or run, the cluster unreachable, refusing, or
       serving no minitask.dev/v1: minitask older than release 5), or,
       for --wait and --showlog (start, rerun), the run failed or was deleted
       before it finished
  2    a usage error: unknown command or flag, wrong arguments, a malformed
       -p, -w, -l, --serviceaccount, --timeout, --pending-timeout,
       --keep-since or --request-timeout, a -p value not of its param's
       type, a param or workspace the Task does not declare, a required
       param without a value
  130  interrupted (Ctrl-C); a run that was started goes on in the cluster
       (dashboard exits 0 on Ctrl-C: that is how it ends)`

// NewRootCommand returns the plugin's command tree, writing to o.Streams.
func NewRootCommand(o Options) *cobra.Command {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	p := &plugin{Options: o, flags: genericclioptions.NewConfigFlags(true)}
	if p.LogSource == nil {
		p.LogSource = podLogSource(p.PollInterval)
	}

	root := &cobra.Command{
		Use:   "kubectl-task",
		Short: "Start minitask Tasks and follow their runs",
		Long:  rootHelp,
		Annotations: map[string]string{
			// Help reads "kubectl task start", as users type it.
			cobra.CommandDisplayNameAnnotation: "kubectl task",
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		Args:              noArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkRequestTimeout(cmd, *p.flags.Timeout)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErrorf(cmd, "%v", err)
	})
	p.flags.AddFlags(root.PersistentFlags())
	// Every command's help would list all of kubectl's connection flags; keep
	// the everyday ones in sight. The others still work.
	for _, name := range []string{"as", "as-group", "as-uid", "as-user-extra", "cache-dir", "certificate-authority",
		"client-certificate", "client-key", "disable-compression", "insecure-skip-tls-verify", "proxy-url", "server",
		"tls-server-name", "token"} {
		_ = root.PersistentFlags().MarkHidden(name)
	}
	p.registerNamespaceCompletion(root)

	root.AddCommand(
		p.newStartCommand(),
		p.newLogsCommand(),
		p.newListCommand(),
		p.newDescribeCommand(),
		p.newCancelCommand(),
		p.newRerunCommand(),
		p.newDeleteCommand(),
		p.newDashboardCommand(),
		p.newCompletionCommand(root),
	)
	return root
}

// Execute runs the plugin with args and returns its exit code, having
// printed any error as one line (the missing-params refusal adds a list).
func Execute(ctx context.Context, args []string, o Options) (code int) {
	// A bug must not show users a Go stack trace.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(o.Streams.ErrOut, "error: internal error: %v; please report it at https://github.com/minitask-dev/minitask/issues\n", r)
			code = ExitError
		}
	}()
	root := NewRootCommand(o)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return report(o.Streams.ErrOut, err)
	}
	return ExitOK
}

// noArgs refuses arguments to a command that takes none, such as the root
// with an unknown command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return usageErrorf(cmd, "unknown command %q", args[0])
	}
	return usageErrorf(cmd, "%s takes no arguments", cmd.CommandPath())
}

// exactlyOne requires one argument, named what in the error, e.g. "a Task name".
func exactlyOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 1:
			return nil
		case len(args) == 0:
			return usageErrorf(cmd, "%s needs %s", cmd.CommandPath(), what)
		default:
			return usageErrorf(cmd, "%s takes one argument, %s, but got %d", cmd.CommandPath(), what, len(args))
		}
	}
}

// atMostOne allows zero or one argument, named what in the error.
func atMostOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) <= 1 {
			return nil
		}
		return usageErrorf(cmd, "%s takes at most one argument, %s, but got %d", cmd.CommandPath(), what, len(args))
	}
}
