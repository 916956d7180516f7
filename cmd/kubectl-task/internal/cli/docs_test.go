package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestDocsMatchTheGreetSample holds docs/kubectl-task.md's first example of
// start to the sample Task it names, greet: start without -p, against
// config/samples/v1beta1_task_params.yaml, refuses with what the docs show.
func TestDocsMatchTheGreetSample(t *testing.T) {
	h := newHarness(t)
	sample, err := os.ReadFile(filepath.Join(env.RepoRoot, "config/samples/v1beta1_task_params.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	task := &v1.Task{}
	if err := yaml.UnmarshalStrict(sample, task); err != nil {
		t.Fatalf("reading the sample: %v", err)
	}
	h.Create(t, task)

	doc, err := os.ReadFile(filepath.Join(env.RepoRoot, "docs/kubectl-task.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The example: the command, then what it prints, up to a blank line.
	example := regexp.MustCompile(`(?m)^\$ kubectl task start greet\n((?:.+\n)+)`).FindSubmatch(doc)
	if example == nil {
		t.Fatal("docs/kubectl-task.md has no example of kubectl task start greet")
	}
	got := h.kubectlTask(t, "start", "greet")
	if diff := cmp.Diff(result{Code: 2, Stderr: string(example[1])}, got); diff != "" {
		t.Errorf("kubectl task start greet (-docs +got):\n%s", diff)
	}
}
