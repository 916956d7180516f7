package controllers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// TestLifecycleDocTable keeps the condition table of docs/lifecycle.md true:
// one row per reason the API defines, each with the v1alpha1 phase that
// conversion actually gives it.
func TestLifecycleDocTable(t *testing.T) {
	rows := markdown.Table(t, "../docs/lifecycle.md", "| status | reason |")

	var reasons []string
	for _, row := range rows {
		status, reason, phase := row[0], row[1], strings.Trim(row[len(row)-1], `"`)
		var got v1alpha1.TaskRunPhase
		if status == "(no condition)" {
			got = conversion.PhaseFromCondition(nil)
		} else {
			reasons = append(reasons, reason)
			got = conversion.PhaseFromCondition(&metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionStatus(status), Reason: reason})
		}
		if string(got) != phase {
			t.Errorf("docs say %s/%s is v1alpha1 phase %q; conversion gives %q", status, reason, phase, got)
		}
	}

	want := []string{}
	for _, r := range []v1beta1.TaskRunReason{
		v1beta1.ReasonPending, v1beta1.ReasonWaitingForTask, v1beta1.ReasonRunning, v1beta1.ReasonSucceeded,
		v1beta1.ReasonStepFailed, v1beta1.ReasonTimeout, v1beta1.ReasonCancelled, v1beta1.ReasonInvalidParams,
		v1beta1.ReasonPodFailed, v1beta1.ReasonFailed,
	} {
		want = append(want, string(r))
	}
	slices.Sort(want)
	slices.Sort(reasons)
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("the table's reasons differ from the API's (-api +docs):\n%s", diff)
	}
}
