package cli_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/releases"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// TestWarningsReachStderr checks that a warning the API server sends with
// its answer (here an admission policy's) is printed on stderr, once, as
// kubectl prints it, and the command goes on: the plugin keeps no warning
// from the user.
func TestWarningsReachStderr(t *testing.T) {
	h := newHarness(t)
	h.Create(t, greetTask("greet"))
	releases.AdmissionPolicy(t, h.Env, "warn-"+h.NS, "false", "runs here are audited", admissionregistrationv1.Warn,
		&metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": h.NS}})
	var got result
	n := 0
	testenv.Eventually(t, func() (bool, string) {
		n++
		got = h.kubectlTask(t, "start", "greet", "-p", "greeting=hi", "--name", "greet-"+strings.Repeat("x", n))
		return got.Stderr != "", got.Stderr
	}, "the policy's warning")
	name := "greet-" + strings.Repeat("x", n)
	want := result{Stdout: "TaskRun " + name + " started in namespace NS\nFollow its logs with: kubectl task logs " + name + " -f -n NS\n",
		Stderr: "Warning: Validation failed for ValidatingAdmissionPolicy 'warn-NS' with binding 'warn-NS': runs here are audited\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl task start (-want +got):\n%s", diff)
	}
}
