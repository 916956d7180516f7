package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// Clients reach the cluster that the connection flags name.
type Clients struct {
	// Client reads and writes Tasks and TaskRuns (v1 only), Pods and
	// Events, and watches runs.
	Client client.WithWatch
	// Kube reads Pod logs, which Client cannot stream.
	Kube kubernetes.Interface
	// Host is the API server's address, for messages.
	Host string
}

// newScheme knows the built-in types and minitask v1, and no other
// minitask version: the plugin reads and writes v1 only.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1.AddToScheme(s))
	return s
}

// connect returns the clients and the namespace the flags select, building
// the clients on first use.
func (p *plugin) connect() (*Clients, string, error) {
	loader := p.flags.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, "", clusterError(err, "")
	}
	if p.clients != nil {
		return p.clients, ns, nil
	}
	if raw, err := loader.RawConfig(); err == nil {
		if err := noClusterError(raw, *p.flags.APIServer, rest.InClusterConfig); err != nil {
			return nil, "", err
		}
	}
	// With no cluster in the kubeconfig, client-go falls back to the Pod's
	// ServiceAccount, as kubectl does.
	cfg, err := p.flags.ToRESTConfig()
	if err != nil {
		return nil, "", clusterError(err, "")
	}
	cfg = rest.CopyConfig(cfg)
	// client-go's default, 5 requests a second, made delete take 100 s over
	// 500 runs (33 minutes over 10,000); these are the limits kubectl gives
	// its discovery client.
	if cfg.QPS == 0 && cfg.Burst == 0 {
		cfg.QPS, cfg.Burst = clientQPS, clientBurst
	}
	cfg.WarningHandler = rest.NewWarningWriter(p.Streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	disc, err := p.flags.ToDiscoveryClient()
	if err != nil {
		return nil, "", clusterError(err, cfg.Host)
	}
	if err := checkServesV1(disc, cfg.Host); err != nil {
		return nil, "", err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, "", clusterError(err, cfg.Host)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", clusterError(err, cfg.Host)
	}
	p.clients = &Clients{Client: c, Kube: kube, Host: cfg.Host}
	return p.clients, ns, nil
}

// The plugin's client-side rate limit, unless the kubeconfig sets one.
const (
	clientQPS   = 50
	clientBurst = 300
)

// maxRequestTimeoutSeconds is the most whole seconds a time.Duration holds.
const maxRequestTimeoutSeconds = math.MaxInt64 / int64(time.Second)

// checkRequestTimeout refuses a --request-timeout that client-go cannot read,
// or would misread: it takes a whole number as seconds and multiplies without
// a bound, so 9300000000 would wrap around to a negative timeout (none at
// all) and 18446744074 to 0.3 s.
func checkRequestTimeout(cmd *cobra.Command, timeout string) error {
	_, err := clientcmd.ParseTimeout(timeout)
	if n, nerr := strconv.ParseInt(timeout, 10, 64); err != nil || (nerr == nil && n > maxRequestTimeoutSeconds) {
		return usageErrorf(cmd, "--request-timeout %q is not a duration such as 30s or 1m, nor a number of seconds; 0 means no limit", timeout)
	}
	return nil
}

var errNoKubeconfig = errors.New("no cluster configured: no kubeconfig found; give --kubeconfig, set KUBECONFIG, or create ~/.kube/config")

// noClusterError says why there is no cluster to reach, or returns nil.
// When neither the kubeconfig raw nor --server (server) names a cluster,
// client-go uses the in-cluster config if inCluster finds one, and would
// otherwise try localhost:8080, which is never what a user meant.
func noClusterError(raw clientcmdapi.Config, server string, inCluster func() (*rest.Config, error)) error {
	if len(raw.Clusters) > 0 || server != "" {
		return nil
	}
	_, err := inCluster()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rest.ErrNotInCluster):
		return errNoKubeconfig
	}
	// In a Pod, most likely one whose ServiceAccount token is not mounted.
	return fmt.Errorf("no cluster configured: no kubeconfig found, and the in-cluster config is not usable (%s); "+
		"give --kubeconfig or set KUBECONFIG, or mount the Pod's ServiceAccount token", oneLine(err.Error()))
}

// getTask reads a Task, saying which namespace it is missing from.
func (c *Clients) getTask(ctx context.Context, ns, name string) (*v1.Task, error) {
	task := &v1.Task{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, task)
	if apierrors.IsNotFound(err) {
		return nil, unknownTaskError(ns, name)
	}
	if err != nil {
		return nil, clusterError(err, c.Host)
	}
	return task, nil
}

// listRuns lists the runs opts select, keeping those of Task task, or all
// of them if task is empty.
func (c *Clients) listRuns(ctx context.Context, task string, opts ...client.ListOption) ([]v1.TaskRun, error) {
	var list v1.TaskRunList
	if err := c.Client.List(ctx, &list, opts...); err != nil {
		return nil, clusterError(err, c.Host)
	}
	runs := list.Items[:0]
	for _, run := range list.Items {
		if task == "" || run.Spec.TaskRef.Name == task {
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// getRun reads a TaskRun, saying how to find the runs there are.
func (c *Clients) getRun(ctx context.Context, ns, name string) (*v1.TaskRun, error) {
	run := &v1.TaskRun{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run)
	if apierrors.IsNotFound(err) {
		return nil, runNotFoundError(ns, name)
	}
	if err != nil {
		return nil, clusterError(err, c.Host)
	}
	return run, nil
}

// runNotFoundError says that a run is not there, and how to find those there are.
func runNotFoundError(ns, name string) error {
	return fmt.Errorf("TaskRun %q not found in namespace %q; list the runs there with: kubectl task list -n %s", name, ns, ns)
}

func unknownTaskError(ns, name string) error {
	return fmt.Errorf("Task %q not found in namespace %q; list the Tasks there with: kubectl get tasks.minitask.dev -n %s", name, ns, ns) //nolint:staticcheck // the kind Task, as users see it
}

// podLogSource reads step logs from a run's Pod, looking again every interval
// at a step that has not started.
func podLogSource(interval time.Duration) func(c *Clients, ns, run string) runlogs.Source {
	return func(c *Clients, ns, run string) runlogs.Source {
		return &runlogs.PodSource{Reader: c.Client, Pods: c.Kube.CoreV1(), Namespace: ns, Run: run, PollInterval: interval}
	}
}
