package conversion

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

func TestUnparsableAnnotationIsLoggedAtVerbosityOne(t *testing.T) {
	tests := map[string]struct {
		verbosity int
		inReview  bool // converted by the handler, whose lines name the review
		want      []string
	}{
		"verbosity 0 stays quiet": {verbosity: 0},
		"verbosity 1 says which object and why": {verbosity: 1, want: []string{
			`"level"=1 "msg"="Ignoring unparsable conversion annotation" "namespace"="ci" "name"="nightly" ` +
				`"annotation"="minitask.dev/conversion-data" "error"="jsontext: unexpected EOF within \"/v1beta1\" after offset 11"`,
		}},
		"in a review, the line names the review": {verbosity: 1, inReview: true, want: []string{
			`"level"=1 "msg"="Ignoring unparsable conversion annotation" "review"="0f6a3d52" "namespace"="ci" "name"="nightly" ` +
				`"annotation"="minitask.dev/conversion-data" "error"="jsontext: unexpected EOF within \"/v1beta1\" after offset 11"`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			logger := funcr.New(func(_, args string) { got = append(got, args) }, funcr.Options{Verbosity: tc.verbosity})
			ctx := log.IntoContext(t.Context(), logger)
			if tc.inReview {
				ctx = withReview(t.Context(), logger, "0f6a3d52")
			}
			spoke := spokeRun().Annotation(AnnotationConversionData, `{"v1beta1":`).Obj()
			if err := ConvertAlphaTaskRunToBeta(ctx, spoke, &v1beta1.TaskRun{}); err != nil {
				t.Fatalf("ConvertAlphaTaskRunToBeta() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("log mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
