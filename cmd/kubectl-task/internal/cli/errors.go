package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"
)

// The plugin's exit codes; rootHelp and docs/kubectl-task.md document them.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitError: an error, or a run that start waited for failed.
	ExitError = 1
	// ExitUsage: the command line is wrong; nothing was changed.
	ExitUsage = 2
	// ExitInterrupted: the user pressed Ctrl-C.
	ExitInterrupted = 130
)

// usageError is a command line the plugin cannot run. Its message says what
// to do; detail, if any, follows on lines of its own.
type usageError struct {
	msg    string
	detail string
}

func (e *usageError) Error() string { return e.msg }

// usageErrorf returns a usageError that points to cmd's help.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cmd != nil {
		msg += fmt.Sprintf("; see '%s --help'", cmd.CommandPath())
	}
	return &usageError{msg: msg}
}

// report prints err for a user, as one line saying what to do, and returns
// the exit code it calls for. Cobra's own usage errors (unknown flags and
// commands, wrong arguments) arrive here as usageErrors too: see
// SetFlagErrorFunc, noArgs and exactlyOne.
func report(w io.Writer, err error) int {
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintf(w, "error: %s\n", oneLine(usage.msg))
		fmt.Fprint(w, usage.detail)
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "interrupted; whatever was started goes on in the cluster")
		return ExitInterrupted
	}
	fmt.Fprintf(w, "error: %s\n", oneLine(err.Error()))
	return ExitError
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clusterError turns an error from reaching the API server into one that says
// what to do: no cluster configured, none reachable, minitask not installed,
// credentials refused. Any other error is returned as it is.
func clusterError(err error, host string) error {
	if err == nil {
		return nil
	}
	var urlErr *url.Error
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case clientcmd.IsEmptyConfig(err):
		return errNoKubeconfig
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot read the kubeconfig: %w; check --kubeconfig or KUBECONFIG", err)
	case clientcmd.IsConfigurationInvalid(err):
		return fmt.Errorf("the kubeconfig is not usable: %s; check --kubeconfig, KUBECONFIG and --context",
			strings.TrimPrefix(oneLine(err.Error()), "invalid configuration: "))
	case errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the cluster at %s (%s); check that it is running, and --kubeconfig and --context", host, networkReason(urlErr.Err))
	case meta.IsNoMatchError(err):
		return fmt.Errorf("the cluster at %s does not serve minitask.dev/v1; install minitask there (release 5 or later), or choose another --context", host)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the cluster at %s refused your credentials; log in again, or choose another --context", host)
	}
	return err
}

// networkReason says in a few words why a connection failed.
func networkReason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "no such host"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	}
	return oneLine(err.Error())
}
