// Command kubectl-task is the kubectl task plugin: it starts minitask Tasks
// and follows their runs. Put it on your PATH and run "kubectl task --help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/cli"
)

func main() {
	// controller-runtime warns, with a stack trace, about a logger never set.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := cli.Execute(ctx, os.Args[1:], cli.Options{Streams: streams})
	stop()
	os.Exit(code)
}
