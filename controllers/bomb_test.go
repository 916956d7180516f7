package controllers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
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
	h.waitForCondition(t, "bomb", condition{metav1.ConditionFalse, v1.ReasonInvalidParams, fmt.Sprintf(
		"with its params and workspace paths expanded, the Pod's images, scripts, commands, args, working directories and env values would hold %d bytes, over the limit of 1048576 bytes (1 MiB); no Pod was created", size)})
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

// TestParamExpansionBombInEnv runs the bomb through the fields release 3
// added: 20 steps whose 10 env values and args each refer to a 64 KiB param
// 10 times. The budget counts them as it counts scripts. (More env values
// would pass what the stash guard lets a Task carry for v1alpha1 clients.)
func TestParamExpansionBombInEnv(t *testing.T) {
	h := newHarness(t)
	h.startController(t, time.Hour)
	refs := strings.Repeat("$(params.x)", 10)
	steps := make([]v1.Step, 20)
	for i := range steps {
		env := make([]corev1.EnvVar, 10)
		for j := range env {
			env[j] = corev1.EnvVar{Name: fmt.Sprintf("V%d", j), Value: refs}
		}
		steps[i] = v1.Step{Name: fmt.Sprintf("step-%d", i), Image: "alpine:3", Args: []string{refs}, Env: env}
	}
	h.Create(t, wrappers.Task("", "env-bomb").Param("x").Steps(steps...).Obj(),
		wrappers.TaskRun("", "env-bomb", "env-bomb").Param("x", strings.Repeat("y", 64<<10)).Obj())

	size := 20 * (len("alpine:3") + 11*10*(64<<10))
	h.waitForCondition(t, "env-bomb", condition{metav1.ConditionFalse, v1.ReasonInvalidParams, fmt.Sprintf(
		"with its params and workspace paths expanded, the Pod's images, scripts, commands, args, working directories and env values would hold %d bytes, over the limit of 1048576 bytes (1 MiB); no Pod was created", size)})
	if n := countVerb(h.writes.of("env-bomb-pod"), "create"); n != 0 {
		t.Errorf("the controller tried %d times to create the Pod, want none", n)
	}
}
