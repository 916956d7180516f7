package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// completionTimeout bounds the cluster lookups behind one press of Tab.
const completionTimeout = 5 * time.Second

func (p *plugin) newCompletionCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh",
		Short: "Print a shell completion script",
		Long: `Print a script that completes kubectl task's commands, flags, and the names of
Tasks, runs, steps and namespaces, read from the cluster.

As a kubectl plugin, "kubectl task <Tab>" completes through an executable named
kubectl_complete-task on your PATH (kubectl 1.26 or later); make install-plugin
installs one. For the kubectl-task binary itself, load the script:`,
		Example: `  # bash, for this shell
  source <(kubectl-task completion bash)

  # zsh, for every shell
  kubectl-task completion zsh > "${fpath[1]}/_kubectl-task"`,
		ValidArgs: []string{"bash", "zsh"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh") {
				return usageErrorf(cmd, "%s needs one shell: bash or zsh", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "zsh" {
				return root.GenZshCompletion(p.Streams.Out)
			}
			return root.GenBashCompletionV2(p.Streams.Out, true)
		},
	}
}

// completeTasks completes the first argument with the names of the Tasks in
// the namespace.
func (p *plugin) completeTasks(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return p.completeNames(cmd, toComplete, func(ctx context.Context, c client.Client, ns string) ([]string, error) {
		var list v1.TaskList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		names := make([]string, len(list.Items))
		for i, t := range list.Items {
			names[i] = t.Name
		}
		return names, nil
	})
}

// completeRuns completes the first argument with the names of the runs in the
// namespace, newest first; only those that have not finished if unfinished.
func (p *plugin) completeRuns(unfinished bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return p.completeNames(cmd, toComplete, func(ctx context.Context, c client.Client, ns string) ([]string, error) {
			var list v1.TaskRunList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			sortNewestFirst(list.Items)
			var names []string
			for i := range list.Items {
				if !unfinished || !runstate.Finished(&list.Items[i]) {
					names = append(names, list.Items[i].Name)
				}
			}
			return names, nil
		})
	}
}

// completeSteps completes --step with the steps of the run named first.
func (p *plugin) completeSteps(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return p.completeNames(cmd, toComplete, func(ctx context.Context, _ client.Client, ns string) ([]string, error) {
		return p.LogSource(p.clients, ns, args[0]).Steps(ctx, false)
	})
}

// registerNamespaceCompletion completes -n with the cluster's namespaces.
func (p *plugin) registerNamespaceCompletion(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return p.completeNames(cmd, toComplete, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
			var list corev1.NamespaceList
			if err := c.List(ctx, &list); err != nil {
				return nil, err
			}
			names := make([]string, len(list.Items))
			for i, ns := range list.Items {
				names[i] = ns.Name
			}
			return names, nil
		})
	})
}

// completeNames offers the names that list returns and that start with
// toComplete. A cluster that cannot be reached completes nothing, quietly.
func (p *plugin) completeNames(cmd *cobra.Command, toComplete string,
	list func(ctx context.Context, c client.Client, ns string) ([]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, ns, err := p.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	names, err := list(ctx, c.Client, ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeWorkspaces completes start's -w for the Task named first: first
// the Task's workspaces, as NAME=, then, after the =, the kinds of source.
// Names of claims, ConfigMaps and Secrets are not offered: listing Secrets
// would read their values.
func (p *plugin) completeWorkspaces(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if name, _, ok := strings.Cut(toComplete, "="); ok {
		var out []cobra.Completion
		for _, kind := range []string{runinfo.SourceEmptyDir, runinfo.SourcePVC + ":", runinfo.SourceConfigMap + ":", runinfo.SourceSecret + ":"} {
			if c := name + "=" + kind; strings.HasPrefix(c, toComplete) {
				out = append(out, c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	names, directive := p.completeNames(cmd, toComplete, func(ctx context.Context, c client.Client, ns string) ([]string, error) {
		task := &v1.Task{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[0]}, task); err != nil {
			return nil, err
		}
		names := make([]string, len(task.Spec.Workspaces))
		for i, w := range task.Spec.Workspaces {
			names[i] = w.Name + "="
		}
		return names, nil
	})
	return names, directive | cobra.ShellCompDirectiveNoSpace
}

// completeServiceAccounts completes --serviceaccount with the namespace's
// ServiceAccounts, and with nothing where they may not be listed.
func (p *plugin) completeServiceAccounts(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return p.completeNames(cmd, toComplete, func(ctx context.Context, c client.Client, ns string) ([]string, error) {
		var list corev1.ServiceAccountList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		names := make([]string, len(list.Items))
		for i, sa := range list.Items {
			names[i] = sa.Name
		}
		return names, nil
	})
}
