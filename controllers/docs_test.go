package controllers_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

// TestLifecycleDocTable keeps the condition table of docs/lifecycle.md true:
// one row per reason the API defines, each with its status and the v1alpha1
// phase that conversion actually gives it.
func TestLifecycleDocTable(t *testing.T) {
	rows := markdown.Table(t, "../docs/lifecycle.md", "| status | reason |")

	var reasons []runstate.Reason
	for _, row := range rows {
		status, reason, phase := row[0], row[1], strings.Trim(row[len(row)-1], `"`)
		var got v1alpha1.TaskRunPhase
		if status == "(no condition)" {
			got = runstate.PhaseFromCondition(nil)
		} else {
			reasons = append(reasons, runstate.Reason{Status: metav1.ConditionStatus(status), Reason: v1beta1.TaskRunReason(reason)})
			got = runstate.PhaseFromCondition(&metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionStatus(status), Reason: reason})
		}
		if string(got) != phase {
			t.Errorf("docs say %s/%s is v1alpha1 phase %q; conversion gives %q", status, reason, phase, got)
		}
	}

	if diff := cmp.Diff(runstate.Reasons(), reasons); diff != "" {
		t.Errorf("the table's reasons differ from the API's (-api +docs):\n%s", diff)
	}
}
