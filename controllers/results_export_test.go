package controllers

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
)

// ScriptCommand is, for the envtest tests of package controllers_test, the
// command of a script step of a Pod of steps steps: the wrapper that writes
// its termination message.
func ScriptCommand(script string, onError v1.OnError, steps int, results ...string) []string {
	return stepscript.Command(script, onError, stepscript.Timer{}, stepscript.Protocol{Results: results, MessageLimit: runstate.TerminationMessageLimit(steps)})
}
