package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runops"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// startFlags are start's flags.
type startFlags struct {
	params         []string
	workspaces     []string
	serviceAccount string
	labels         []string
	timeout        string
	pendingTimeout string
	name           string
	generateName   bool
	last           bool
	file           string
	follow         followFlags
}

func (p *plugin) newStartCommand() *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start (TASK | -f FILE) [-p NAME=VALUE ...]",
		Short: "Start a run of a Task, or of a Task file",
		Long: `Start a run of a Task: create a TaskRun and print its name, and the command
that follows its logs.

Before creating anything, start checks the params: every param the Task declares
without a default needs a value (-p NAME=VALUE); start lists those that are
missing, with their descriptions, and the params that have defaults.

A -p value is read as the type the Task declares for its param: a string as
it is; an array as a JSON array of strings (-p 'files=["a.go","b c.go"]') or
as items between commas (-p files=a.go,b.go; empty: no item); an object as a
JSON object of strings (-p 'image={"repo":"example.org/app","tag":"v2"}') or
as KEY=VALUE pairs between commas (-p image=repo=example.org/app,tag=v2),
giving every key the param declares. A value that is not of the param's type
is refused, saying how to write it.

A -w for a workspace the Task does not declare is refused, naming those it
declares; a workspace left unbound is an emptyDir for the run's Pod.

With --last, the run takes the params, workspaces, ServiceAccount, Pod
template, timeouts, retries, retryOn, TTL and labels of the Task's newest run
(by creation time); -p, -w, -l, --serviceaccount, --timeout and
--pending-timeout override them, one by one. What the newest run set that the
Task no longer declares is left out, with a warning.

With -f FILE (- for stdin), start runs the Task in the file (minitask.dev/v1,
v1beta1 or v1alpha1) without applying it: the TaskRun carries its spec inline
(spec.taskSpec), and is named after the Task's name. The params, workspaces and
flags are checked against the file's Task as against a Task of the cluster;
--last takes a Task's name, so not -f.

With --wait or --showlog, start waits for the run to finish, and exits 0 when
it succeeded, or 1 with the reason when it failed. Should the logs stop before
the run ends, --showlog says why and goes on waiting: the exit code is the run's.`,
		Example: `  # Run the Task greet, with a value for its param greeting
  kubectl task start greet -p greeting=hello

  # Run it under a name of your own, at most 10 minutes, and follow its steps' logs
  kubectl task start greet -p greeting=hello --name greet-1 --timeout 10m --showlog

  # Run the Task build with its workspace source on a claim, as the
  # ServiceAccount builder, labelled so that list -l finds it
  kubectl task start build -w source=pvc:build-cache -w settings=configmap:build-settings \
    --serviceaccount builder -l team=platform

  # Run lint on two files (an array param), with an image (an object param),
  # failing if its Pod has not started a step within 5 minutes
  kubectl task start lint -p files=main.go,util.go -p image=repo=golang,tag=1.26 --pending-timeout 5m

  # Run build again as its newest run did, but with another value for tag
  kubectl task start build --last -p tag=v2

  # Run the Task in a file, without applying it, and follow its logs
  kubectl task start -f greet.yaml -p greeting=hello --showlog`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.file != "" {
				if len(args) > 0 {
					return usageErrorf(cmd, "give the name of a Task or -f FILE, not both")
				}
				return nil
			}
			return exactlyOne("the name of a Task, or -f FILE")(cmd, args)
		},
		ValidArgsFunction: p.completeTasks,
		RunE: func(cmd *cobra.Command, args []string) error {
			taskName := ""
			if len(args) == 1 {
				taskName = args[0]
			}
			return p.runStart(cmd, taskName, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.params, "param", "p", nil, "A param's value, as NAME=VALUE; repeat for each param. "+
		"An array: a JSON array or a,b,c; an object: a JSON object or KEY=VALUE,KEY=VALUE")
	fl.StringArrayVarP(&f.workspaces, "workspace", "w", nil, "Bind a workspace of the Task: "+workspaceFlagHelp+"; repeat for each workspace")
	fl.StringVar(&f.serviceAccount, "serviceaccount", "", "The ServiceAccount the run's Pod runs as (default: none, and no API token)")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "A label of the run, as KEY=VALUE; repeat for each label")
	fl.StringVar(&f.timeout, "timeout", "", "How long the run may take, e.g. 10m or 1h30m; 0s means no limit (default: the controller's, "+
		flagDuration(runstate.DefaultTimeout)+" unless set)")
	fl.StringVar(&f.pendingTimeout, "pending-timeout", "", "How long the run may wait for its first step to start (scheduling, image pulls, mounts, its Task), "+
		"e.g. 5m; 0s means no limit (default: the controller's limits)")
	fl.StringVar(&f.name, "name", "", "The TaskRun's name (default: generated, TASK-xxxxx)")
	fl.BoolVar(&f.generateName, "generate-name", false, "Generate the TaskRun's name from the Task's, TASK-xxxxx (the default; excludes --name)")
	fl.StringVarP(&f.file, "filename", "f", "", "Run the Task in this file (- for stdin), of any version, without applying it: its spec goes inline in the TaskRun")
	fl.BoolVar(&f.last, "last", false, "Take the params, workspaces, ServiceAccount, Pod template, timeouts, retries, TTL and labels of the Task's newest run; other flags override them")
	f.follow.addFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("workspace", p.completeWorkspaces)
	_ = cmd.RegisterFlagCompletionFunc("serviceaccount", p.completeServiceAccounts)
	return cmd
}

func (p *plugin) runStart(cmd *cobra.Command, taskName string, f startFlags) error {
	ctx := cmd.Context()
	given, err := parseParams(cmd, f.params)
	if err != nil {
		return err
	}
	workspaces, err := parseWorkspaces(cmd, f.workspaces)
	if err != nil {
		return err
	}
	runLabels, err := parseLabels(cmd, f.labels)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("serviceaccount") {
		if f.serviceAccount == "" {
			return usageErrorf(cmd, "--serviceaccount needs the name of a ServiceAccount; leave the flag out for none")
		}
		if errs := validation.IsDNS1123Subdomain(f.serviceAccount); len(errs) > 0 {
			return usageErrorf(cmd, "--serviceaccount %q is not a ServiceAccount name: %s", f.serviceAccount, strings.Join(errs, "; "))
		}
	}
	if f.name != "" && f.generateName {
		return usageErrorf(cmd, "give --name or --generate-name, not both")
	}
	if f.file != "" && f.last {
		return usageErrorf(cmd, "--last repeats a run of a Task of the cluster, by its name; it does not take -f")
	}
	timeout, err := durationFlag(cmd, "timeout", f.timeout, "10m or 1h30m")
	if err != nil {
		return err
	}
	pendingTimeout, err := durationFlag(cmd, "pending-timeout", f.pendingTimeout, "5m or 90s")
	if err != nil {
		return err
	}

	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	var task *v1.Task
	if f.file != "" {
		task, err = readTaskFile(ctx, f.file, p.Streams.In)
	} else {
		task, err = c.getTask(ctx, ns, taskName)
	}
	if err != nil {
		return err
	}
	if err := checkWorkspaces(cmd, task, workspaces); err != nil {
		return err
	}
	if given, err = typeParams(cmd, task, given); err != nil {
		return err
	}

	run := &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.name, Labels: runLabels},
		Spec: v1.TaskRunSpec{
			TaskRef:            v1.TaskRef{Name: task.Name},
			Params:             given,
			Workspaces:         workspaces,
			Timeouts:           v1.Timeouts{Total: timeout, Pending: pendingTimeout},
			ServiceAccountName: f.serviceAccount,
		},
	}
	if f.file != "" {
		// Inline: the Task's name names the run only.
		run.Spec.TaskRef, run.Spec.TaskSpec = v1.TaskRef{}, task.Spec.DeepCopy()
		if run.Name == "" {
			run.GenerateName = task.Name + "-"
		}
	}
	var from string
	if f.last {
		last, err := c.newestRunOf(ctx, ns, task.Name)
		if err != nil {
			return err
		}
		if last == nil {
			return fmt.Errorf("Task %q has no runs in namespace %q for --last to start again; start it without --last", task.Name, ns) //nolint:staticcheck // the kind Task, as users see it
		}
		from = last.Name
		run.Spec = runops.RepeatedSpec(last)
		run.Spec.Params = mergeParams(p.Streams.ErrOut, task, last.Name, run.Spec.Params, given)
		run.Spec.Workspaces = mergeWorkspaces(p.Streams.ErrOut, task, last.Name, run.Spec.Workspaces, workspaces)
		if cmd.Flags().Changed("serviceaccount") {
			run.Spec.ServiceAccountName = f.serviceAccount
		}
		if timeout != nil {
			run.Spec.Timeouts.Total = timeout
		}
		if pendingTimeout != nil {
			run.Spec.Timeouts.Pending = pendingTimeout
		}
		run.Labels = mergeLabels(runops.RepeatedLabels(last), runLabels)
	}
	if err := checkParams(cmd, task, runinfo.Params(task, run.Spec.Params)); err != nil {
		return err
	}
	// Only --last can bring a value of another type than the Task now
	// declares: typeParams read every -p as its param's type.
	if wrong := runops.WrongTypeParams(task, run.Spec.Params); f.last && len(wrong) > 0 {
		return usageErrorf(cmd, "TaskRun %s's values are not of the types Task %q now declares (%s); give each with -p NAME=VALUE",
			from, task.Name, strings.Join(wrong, "; "))
	}
	return p.createAndFollow(ctx, c, run, from, f.follow)
}

// durationFlag reads the duration flag name, nil when it is not given; a
// value that is no duration, or is negative, is a usage error that gives
// examples.
func durationFlag(cmd *cobra.Command, name, value, examples string) (*v1.Duration, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		return nil, usageErrorf(cmd, "--%s %q is not a duration such as %s (0s means no limit)", name, value, examples)
	}
	return v1.NewDuration(d), nil
}

// followFlags say whether a command that starts a run waits for it.
type followFlags struct {
	showlog bool
	wait    bool
}

func (f *followFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.showlog, "showlog", false, "Follow the steps' logs, in order, until the run finishes")
	cmd.Flags().BoolVar(&f.wait, "wait", false, "Wait until the run finishes, and exit 1 if it failed")
}

// createAndFollow creates run, named after its Task unless it has a name,
// says so (and, if from is set, which run it repeats), then follows it as f
// asks.
func (p *plugin) createAndFollow(ctx context.Context, c *Clients, run *v1.TaskRun, from string, f followFlags) error {
	ns := run.Namespace
	if err := runops.Create(ctx, c.Client, run); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("TaskRun %q already exists in namespace %q; choose another --name, or leave it out to generate one", run.Name, ns)
		}
		return clusterError(err, c.Host)
	}
	out := p.Streams.Out
	if from != "" {
		fmt.Fprintf(out, "TaskRun %s started in namespace %s, with the settings of TaskRun %s\n", run.Name, ns, from)
	} else {
		fmt.Fprintf(out, "TaskRun %s started in namespace %s\n", run.Name, ns)
	}
	fmt.Fprintf(out, "Follow its logs with: kubectl task logs %s -f -n %s\n", run.Name, ns)
	if !f.showlog && !f.wait {
		return nil
	}

	// The wait ends with this command, whichever way.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outcome := watchRun(ctx, c, run)
	if f.showlog {
		src := p.LogSource(c, ns, run.Name)
		if _, err := runlogs.Stream(ctx, src, out, runlogs.Options{Follow: true}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The run goes on whatever befalls its logs (a connection
			// reset, a kubelet gone): say so, and exit by how the run ends.
			fmt.Fprintf(p.Streams.ErrOut, "warning: the logs stopped: %s; waiting for TaskRun %s to finish\n",
				oneLine(clusterError(err, c.Host).Error()), run.Name)
		}
	}
	done := <-outcome
	if done.err != nil {
		return done.err
	}
	return finishedRunResult(out, done.run)
}

// finishedRunResult reports a finished run: a line on w when it succeeded,
// an error with its reason (exit code 1) when it failed.
func finishedRunResult(w io.Writer, run *v1.TaskRun) error {
	c := runstate.Succeeded(run)
	if c.Status == metav1.ConditionTrue {
		fmt.Fprintf(w, "TaskRun %s succeeded in %s\n", run.Name, runDuration(run))
		return nil
	}
	return fmt.Errorf("TaskRun %s failed (%s): %s; see kubectl task describe %s -n %s",
		run.Name, c.Reason, c.Message, run.Name, run.Namespace)
}

// runDuration is how long a finished run took.
func runDuration(run *v1.TaskRun) string {
	return between(run.Status.StartTime, run.Status.CompletionTime)
}
