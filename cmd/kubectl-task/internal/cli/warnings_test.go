package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

// TestWithoutOwnDeprecation checks that the plugin keeps from the user only
// the deprecation of the version it reads itself, v1beta1, as the CRDs word
// it, and passes every other warning on.
func TestWithoutOwnDeprecation(t *testing.T) {
	tests := map[string]struct {
		code int
		text string
		want string
	}{
		"v1beta1 TaskRun deprecated": {code: 299, text: "minitask.dev/v1beta1 TaskRun is deprecated; use minitask.dev/v1 TaskRun"},
		"v1beta1 Task deprecated":    {code: 299, text: "minitask.dev/v1beta1 Task is deprecated; use minitask.dev/v1 Task"},
		"v1alpha1 deprecated": {code: 299, text: "minitask.dev/v1alpha1 Task is deprecated; use minitask.dev/v1 Task",
			want: "Warning: minitask.dev/v1alpha1 Task is deprecated; use minitask.dev/v1 Task\n"},
		"another kind of v1beta1": {code: 299, text: "minitask.dev/v1beta1 Pipeline is deprecated",
			want: "Warning: minitask.dev/v1beta1 Pipeline is deprecated\n"},
		"a webhook's warning naming v1beta1": {code: 299, text: "minitask.dev/v1beta1 TaskRun: spec.timeout is long",
			want: "Warning: minitask.dev/v1beta1 TaskRun: spec.timeout is long\n"},
		"another code": {code: 199, text: "minitask.dev/v1beta1 TaskRun is deprecated; use minitask.dev/v1 TaskRun"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			h := withoutOwnDeprecation{next: rest.NewWarningWriter(&out, rest.WarningWriterOptions{})}
			h.HandleWarningHeader(tc.code, "", tc.text)
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
		})
	}
}
