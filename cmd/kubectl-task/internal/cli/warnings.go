package cli

import (
	"strings"

	"k8s.io/client-go/rest"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// withoutOwnDeprecation passes every warning the API server sends on to
// next, but the one that minitask.dev/v1beta1 is deprecated (release 6):
// the plugin reads and writes v1beta1 itself, so that warning would follow
// every command, and the user could do nothing about it. It goes when the
// plugin moves to v1. Other warnings, another deprecation among them, still
// reach the user.
type withoutOwnDeprecation struct {
	next rest.WarningHandler
}

// HandleWarningHeader implements rest.WarningHandler.
func (w withoutOwnDeprecation) HandleWarningHeader(code int, agent, text string) {
	if isOwnDeprecation(code, text) {
		return
	}
	w.next.HandleWarningHeader(code, agent, text)
}

// isOwnDeprecation says whether a warning is the API server's deprecation
// warning of one of v1beta1's kinds, as the CRDs give it
// ("minitask.dev/v1beta1 TaskRun is deprecated; use minitask.dev/v1
// TaskRun"): code 299, and the text naming v1beta1 first.
func isOwnDeprecation(code int, text string) bool {
	kind, ok := strings.CutPrefix(text, v1beta1.GroupVersion.String()+" ")
	if code != 299 || !ok {
		return false
	}
	kind, _, ok = strings.Cut(kind, " is deprecated")
	return ok && (kind == "Task" || kind == "TaskRun")
}
