package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
)

// dashboardFlags are dashboard's flags.
type dashboardFlags struct {
	allNamespaces bool
	address       string
	port          int
	readOnly      bool
	open          bool
}

func (p *plugin) newDashboardCommand() *cobra.Command {
	var f dashboardFlags
	cmd := &cobra.Command{
		Use:   "dashboard [-n NS | -A] [--address 127.0.0.1] [--port 0] [--read-only] [--open]",
		Short: "Serve a web dashboard of runs and Tasks, live, on this machine",
		Long: `Serve a web dashboard of the runs and Tasks of a namespace (or, with -A,
of every namespace) and print its URL; it serves until Ctrl-C. Nothing is
installed in the cluster: the dashboard runs here, with your kubeconfig, so
it shows and does exactly what you may.

The runs list follows every change as it happens (newest first, filtered by
status, Task and labels); a run's page shows its steps as a timeline, its
logs as they are written, its params, workspaces, Pod settings, attempts,
conditions and Events, and its YAML in every served version side by side. A
Task's page starts a run of it. Cancel, rerun, start and delete are buttons,
unless --read-only.

It listens on 127.0.0.1 on a port of its own (--port 0) and answers only
requests addressed to that address, so that another web site cannot reach
it through your browser; its buttons work only from its own pages. With
--address set to anything but a loopback address, anyone who can reach that
address can use your credentials through it: it warns you so.`,
		Example: `  # The runs of the current namespace, in your browser
  kubectl task dashboard --open

  # Every namespace's runs, on a fixed port, without the buttons
  kubectl task dashboard -A --port 8080 --read-only`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return p.runDashboard(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "Show the runs and Tasks of every namespace")
	fl.StringVar(&f.address, "address", "127.0.0.1", "The address to listen on; anything but loopback exposes your credentials to whoever reaches it")
	fl.IntVar(&f.port, "port", 0, "The port to listen on; 0 picks a free one")
	fl.BoolVar(&f.readOnly, "read-only", false, "Leave out every action: cancel, rerun, start and delete")
	fl.BoolVar(&f.open, "open", false, "Open the dashboard in your web browser")
	return cmd
}

func (p *plugin) runDashboard(cmd *cobra.Command, f dashboardFlags) error {
	if f.port < 0 || f.port > 65535 {
		return usageErrorf(cmd, "--port %d is not a port: give one from 1 to 65535, or 0 for a free one", f.port)
	}
	if f.allNamespaces && cmd.Flags().Changed("namespace") {
		return usageErrorf(cmd, "give -n NAMESPACE or -A, not both")
	}
	c, ns, err := p.connect()
	if err != nil {
		return err
	}
	if f.allNamespaces {
		ns = ""
	}
	// client-go's reflectors log a failed list or watch through klog, onto
	// the terminal; the pages say it instead.
	klog.SetLogger(logr.Discard())
	// The dashboard holds its runs for as long as it serves, and allocates
	// little once it has them: a heap that may grow to 1.5 times what it
	// holds, not 2, keeps its memory a seventh lower (46 to 33 MB of its own
	// with 10,000 runs, docs/benchmarks.md) for a few more collections. A
	// GOGC the user set wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}

	listener, err := net.Listen("tcp", net.JoinHostPort(f.address, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", net.JoinHostPort(f.address, strconv.Itoa(f.port)), err)
	}
	addr := listener.Addr().(*net.TCPAddr)
	cfg := dashboard.Config{Client: c.Client, Kube: c.Kube, Namespace: ns, Cluster: c.Host, ReadOnly: f.readOnly}
	if p.LogSource != nil {
		cfg.LogSource = func(ns, run string) runlogs.Source { return p.LogSource(c, ns, run) }
	}
	srv, err := dashboard.New(cfg, addr, f.address)
	if err != nil {
		listener.Close()
		return err
	}
	ctx := cmd.Context()
	srv.Start(ctx)

	url := "http://" + dashboardHost(addr, f.address) + "/"
	scope := fmt.Sprintf("namespace %s", ns)
	if ns == "" {
		scope = "every namespace"
	}
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(p.Streams.ErrOut, "warning: the dashboard listens on %s, not loopback: whoever reaches that address acts with your credentials (%s)\n",
			addr, c.Host)
	}
	fmt.Fprintf(p.Streams.Out, "Dashboard of %s on %s%s: %s\n", scope, c.Host, readOnlyNote(f.readOnly), url)
	fmt.Fprintln(p.Streams.Out, "Press Ctrl-C to stop it.")
	if f.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(p.Streams.ErrOut, "warning: could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	if err := serveUntilDone(ctx, listener, srv.Handler()); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Fprintln(p.Streams.Out, "Dashboard stopped.")
	return nil
}

func readOnlyNote(readOnly bool) string {
	if readOnly {
		return ", read-only"
	}
	return ""
}

// dashboardHost is the host:port the printed URL names: the address asked
// for, or for an unspecified one (0.0.0.0), loopback, which reaches it too.
func dashboardHost(addr *net.TCPAddr, asked string) string {
	host := asked
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// serveUntilDone serves h on l until ctx is done (Ctrl-C), then ends every
// request, the pages' event streams included, and returns ctx's error.
func serveUntilDone(ctx context.Context, l net.Listener, h http.Handler) error {
	server := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Event streams end with the dashboard: their requests' contexts
		// are ctx's.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(l) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving the dashboard: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return ctx.Err()
}

// openBrowser opens url in the user's web browser.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, url).Start()
}
