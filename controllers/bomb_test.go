package controllers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestParamExpansionBomb runs the bomb: 20 steps whose scripts refer
// to a param 1,000 times, and a 64 KiB value. Expanded, that is a Pod of 1.3
// GB, which the API server would refuse (413) every time. The run ends
// InvalidParams with the size, and no Pod is attempted.
func TestParamExpansionBomb(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	script := strings.Repeat("echo $(params.x)\n", 1000)
	task := wrappers.Task("", "bomb").Param("x")
	for i := range 20 {
		task.Step(fmt.Sprintf("step-%d", i), "alpine:3", script)
	}
	h.Create(t, task.Obj(), wrappers.TaskRun("", "bomb", "bomb").Param("x", strings.Repeat("y", 64<<10)).Obj())

	size := 20 * (len("alpine:3") + len(script) + 1000*(64<<10-len("$(params.x)")))
	h.waitForCondition(t, "bomb", condition{metav1.ConditionFalse, v1beta1.ReasonInvalidParams, fmt.Sprintf(
		"with its params expanded, the Pod's images and scripts would hold %d bytes, over the limit of 1048576 bytes (1 MiB); no Pod was created", size)})
	if n := countVerb(h.writes.of("bomb-pod"), "create"); n != 0 {
		t.Errorf("the controller tried %d times to create the Pod, want none", n)
	}
	want := []string{"Failed x1", "Started x1"}
	testenv.Eventually(t, func() (bool, string) {
		got := h.events(t, "bomb")
		slices.Sort(got)
		return slices.Equal(want, got), cmp.Diff(want, got)
	}, "a Started and a Failed Event (-want +got)")
}
