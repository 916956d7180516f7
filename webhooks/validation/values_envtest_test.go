package validation_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/validation"
)

// TestLongValuesThroughAPIServer proves that a run's param string past 64
// KiB, which v1's schemaless values leave to admission, is refused through
// the TaskRun webhook's match condition, naming the field; and that a
// value of a type its Task does not declare is not (the controller ends
// such a run).
func TestLongValuesThroughAPIServer(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	ns := env.Namespace(t)
	long := strings.Repeat("x", validation.MaxValueBytes+1)
	// Each character 4 bytes: past the limit with fewer characters than
	// MaxValueBytes, which the match condition counts.
	wide := strings.Repeat("\U0001F600", validation.MaxValueBytes/4+1)
	tests := map[string]struct {
		run     client.Object
		wantErr []string
	}{
		"a string value": {
			run:     wrappers.TaskRun(ns, "long-string", "t").Param("s", long).Obj(),
			wantErr: []string{`TaskRun.minitask.dev "long-string" is invalid: spec.params[0].value: Too long: may not be more than 65536 bytes`},
		},
		"an array's item": {
			run:     wrappers.TaskRun(ns, "long-item", "t").Params(v1.Param{Name: "files", Value: *v1.NewArrayValue("a.go", long)}).Obj(),
			wantErr: []string{`spec.params[0].value[1]: Too long: may not be more than 65536 bytes`},
		},
		"an object's value, in characters of four bytes": {
			run: wrappers.TaskRun(ns, "long-key", "t").Params(v1.Param{Name: "s", Value: *v1.NewStringValue("ok")},
				v1.Param{Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": wide})}).Obj(),
			wantErr: []string{`spec.params[1].value[repo]: Too long: may not be more than 65536 bytes`},
		},
		"at the limit": {
			run: wrappers.TaskRun(ns, "at-limit", "t").Params(v1.Param{Name: "files", Value: *v1.NewArrayValue(long[1:])}).Obj(),
		},
		"a value its Task would not take": {
			run: &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wrong-type"}, Spec: v1.TaskRunSpec{
				TaskRef: v1.TaskRef{Name: "t"}, Params: []v1.Param{{Name: "files", Value: *v1.NewStringValue("a.go")}}}},
		},
	}
	if err := env.Client.Create(context.Background(), typedTaskFor(ns)); err != nil {
		t.Fatalf("creating Task t: %v", err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkAdmission(t, env.Client.Create(context.Background(), tc.run), tc.wantErr)
		})
	}
}

// typedTaskFor is Task t in ns, whose param files is an array.
func typedTaskFor(ns string) *v1.Task {
	return wrappers.Task(ns, "t").Params(v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray}).
		Steps(v1.Step{Name: "lint", Image: "golang:1.26", Args: []string{"$(params.files[*])"}}).Obj()
}
