package controllers

import (
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/stepscript"
)

// ScriptCommand is, for the envtest tests of package controllers_test, the
// command of a script step of a Pod of steps steps: the wrapper that writes
// its termination message.
func ScriptCommand(script string, onError v1beta1.OnError, steps int, results ...string) []string {
	return stepscript.Command(script, onError, stepscript.Protocol{Results: results, MessageLimit: runstate.TerminationMessageLimit(steps)})
}

// resultsProtocol is what the Pod tables of this package (taskrun_pod_test.go,
// pod_shape_test.go) tell a script step's wrapper: the Task's result names
// and the message's limit, as stepscript.Protocol holds them.
type resultsProtocol struct {
	results      []string
	messageLimit int
}

// scriptCommand is, for the Pod tables of this package, the command the
// controller gives a script step: stepscript's, which the controller calls.
func scriptCommand(script string, onError v1beta1.OnError, protocol resultsProtocol) []string {
	return stepscript.Command(script, onError, stepscript.Protocol{Results: protocol.results, MessageLimit: protocol.messageLimit})
}
