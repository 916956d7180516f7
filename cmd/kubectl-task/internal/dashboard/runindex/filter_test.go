package runindex

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestFilter(t *testing.T) {
	runs := map[string]*v1.TaskRun{
		"pending":   wrappers.TaskRun("a", "pending", "build").Label("team", "web").Obj(),
		"running":   wrappers.TaskRun("a", "running", "build").Conditions(cond(metav1.ConditionUnknown, "Running")).Obj(),
		"succeeded": wrappers.TaskRun("a", "succeeded", "test").Label("team", "web").Conditions(cond(metav1.ConditionTrue, "Succeeded")).Obj(),
		"failed":    wrappers.TaskRun("b", "failed", "build").Label("team", "db").Conditions(cond(metav1.ConditionFalse, "StepFailed")).Obj(),
	}
	tests := map[string]struct {
		query   string
		want    []string
		wantErr string
	}{
		"everything":           {query: "", want: []string{"failed", "pending", "running", "succeeded"}},
		"a namespace":          {query: "ns=b", want: []string{"failed"}},
		"a Task":               {query: "task=build", want: []string{"failed", "pending", "running"}},
		"going on":             {query: "status=going-on", want: []string{"pending", "running"}},
		"succeeded":            {query: "status=succeeded", want: []string{"succeeded"}},
		"failed":               {query: "status=failed", want: []string{"failed"}},
		"a label":              {query: "l=team%3Dweb", want: []string{"pending", "succeeded"}},
		"a label's absence":    {query: "l=%21team", want: []string{"running"}},
		"a set of labels":      {query: "l=team+in+(web,db)", want: []string{"failed", "pending", "succeeded"}},
		"all at once":          {query: "ns=a&task=build&status=going-on&l=team", want: []string{"pending"}},
		"an unknown status":    {query: "status=done", wantErr: `unknown status "done"; it is one of going-on, succeeded and failed`},
		"a malformed selector": {query: "l=team%3D%3D%3D", wantErr: `the label selector "team===": `},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			f, err := ParseFilter(q)
			if tc.wantErr != "" {
				if err == nil || len(err.Error()) < len(tc.wantErr) || err.Error()[:len(tc.wantErr)] != tc.wantErr {
					t.Fatalf("ParseFilter(%q) = %v, want an error starting %q", tc.query, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, name := range []string{"failed", "pending", "running", "succeeded"} {
				if f.Matches(runs[name]) {
					got = append(got, name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runs selected (-want +got):\n%s", diff)
			}
			// The filter survives a round trip through its link.
			again, err := ParseFilter(f.Query())
			if err != nil || again.Query().Encode() != f.Query().Encode() {
				t.Errorf("ParseFilter(f.Query()) = %v, %v; want the filter again", again.Query(), err)
			}
		})
	}
}

func cond(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: v1.ConditionSucceeded, Status: status, Reason: reason, Message: "m"}
}
