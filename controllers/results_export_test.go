package controllers

import "github.com/minitask-dev/minitask/apis/v1beta1"

// ScriptCommand is, for the envtest tests of package controllers_test, the
// command of a script step: the wrapper that writes its termination message.
func ScriptCommand(script string, onError v1beta1.OnError, results ...string) []string {
	return scriptCommand(script, onError, results)
}
