package validation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
	"github.com/minitask-dev/minitask/webhooks"
)

// TestWebhookThroughAPIServer proves, through a real API server, that the
// generated ValidatingWebhookConfiguration reaches the webhook and that
// v1alpha1 and v1beta1 requests are judged too, after the API server
// converts them to v1.
func TestWebhookThroughAPIServer(t *testing.T) {
	env := testenv.ForTest(t, webhooks.SetupWithManager)
	// testenv installs the webhook configuration only if it was generated;
	// without it every rejection below would fail as a puzzling "accepted".
	if _, err := os.Stat(filepath.Join(env.RepoRoot, "config", "webhook", "manifests.yaml")); err != nil {
		t.Fatalf("no webhook configuration to install (run make manifests): %v", err)
	}
	ns := env.Namespace(t)

	t.Run("create", func(t *testing.T) { testCreate(t, env, ns) })
	t.Run("update", func(t *testing.T) { testUpdate(t, env, ns) })
	t.Run("kubectl apply", func(t *testing.T) { testKubectlApply(t, env, ns) })
	t.Run("typed params", func(t *testing.T) { testTypedParams(t, env, ns) })
}

func testCreate(t *testing.T, env *testenv.Env, ns string) {
	tests := map[string]struct {
		task    client.Object
		wantErr []string // substrings of the error; none: accepted
	}{
		"v1beta1 valid": {
			task: betaTask(ns, "beta-valid", []v1beta1.ParamSpec{{Name: "greeting"}, {Name: "tag", Default: ptr.To("3")}},
				v1beta1.Step{Name: "say", Image: "alpine:$(params.tag)", Script: `echo "$(params.greeting)" $(date)`}),
		},
		"v1alpha1 valid": {
			task: alphaTask(ns, "alpha-valid", v1alpha1.Step{Name: "say", Image: "alpine:3", Script: `echo "$HOME" $(date)`}),
		},
		"v1beta1 undeclared": {
			task: betaTask(ns, "beta-undeclared", []v1beta1.ParamSpec{{Name: "tag"}},
				v1beta1.Step{Name: "fetch", Image: "alpine:$(params.tag)"},
				v1beta1.Step{Name: "build", Image: "alpine:3", Script: `echo "$(params.greeting)"`}),
			wantErr: []string{`Task.minitask.dev "beta-undeclared" is invalid`,
				`spec.steps[1].script: Invalid value: "$(params.greeting)": step "build" uses undeclared param "greeting"`},
		},
		"v1alpha1 undeclared": {
			task: alphaTask(ns, "alpha-undeclared",
				v1alpha1.Step{Name: "fetch", Image: "alpine:3"},
				v1alpha1.Step{Name: "build", Image: "alpine:3", Script: `echo "$(params.greeting)"`}),
			wantErr: []string{`Task.minitask.dev "alpha-undeclared" is invalid`,
				`spec.steps[1].script: Invalid value: "$(params.greeting)": step "build" uses undeclared param "greeting"`},
		},
		"v1beta1 several problems": {
			task: betaTask(ns, "beta-several", nil,
				v1beta1.Step{Name: "fetch", Image: "$(params.image)"},
				v1beta1.Step{Name: "build", Image: "alpine:3", Script: "echo $(params."}),
			wantErr: []string{
				`spec.steps[0].image: Invalid value: "$(params.image)": step "fetch" uses undeclared param "image"`,
				`spec.steps[1].script: Invalid value: step "build": malformed param reference "$(params.": missing ")"`,
			},
		},
		"v1beta1 workspaces and env values valid": {
			task: withWorkspaces(betaTask(ns, "beta-workspaces", []v1beta1.ParamSpec{{Name: "greeting"}},
				v1beta1.Step{
					Name: "say", Image: "alpine:3", Command: []string{"sh", "-c", `echo "$GREETING" > "$OUT/greeting"`},
					WorkingDir: "$(workspaces.src.path)",
					Env: []corev1.EnvVar{
						{Name: "GREETING", Value: "$(params.greeting)"},
						{Name: "OUT", Value: "$(workspaces.src.path)"},
					},
				}), "src"),
		},
		"v1beta1 undeclared workspace and param in args and env": {
			task: withWorkspaces(betaTask(ns, "beta-undeclared-workspace", nil,
				v1beta1.Step{
					Name: "say", Image: "alpine:3", Args: []string{"$(workspaces.out.path)"},
					Env: []corev1.EnvVar{{Name: "GREETING", Value: "$(params.greeting)"}, {Name: "BAD", Value: "$(workspaces.src)"}},
				}), "src"),
			wantErr: []string{
				`spec.steps[0].args[0]: Invalid value: "$(workspaces.out.path)": step "say" uses undeclared workspace "out"`,
				`spec.steps[0].env[0].value: Invalid value: "$(params.greeting)": step "say" uses undeclared param "greeting"`,
				`spec.steps[0].env[1].value: Invalid value: step "say": malformed workspace reference "$(workspaces.src)"`,
			},
		},
		"v1beta1 results valid": {
			task: wrappers.Task(ns, "beta-results").Steps(
				v1.Step{Name: "tool", Image: "tool", Command: []string{"tool", "--out=$(results.digest.path)"}},
				v1.Step{Name: "report", Image: "alpine:3", Script: "cat $(results.digest.path)", OnError: v1.OnErrorContinue}).Results("digest").Obj(),
		},
		"v1beta1 undeclared result and a last step without a script": {
			task: wrappers.Task(ns, "beta-results-invalid").Steps(
				v1.Step{Name: "report", Image: "alpine:3", Script: "echo > $(results.digets.path)"},
				v1.Step{Name: "push", Image: "pusher", Args: []string{"$(results.digest)"}}).Results("digest").Obj(),
			wantErr: []string{
				`spec.steps[0].script: Invalid value: "$(results.digets.path)": step "report" uses undeclared result "digets"`,
				`spec.steps[1].args[0]: Invalid value: step "push": malformed result reference "$(results.digest)"`,
				`spec.steps[1]: Invalid value: "push": the Task declares results (spec.results), so its last step must have a script`,
			},
		},
		"v1alpha1 malformed": {
			task: alphaTask(ns, "alpha-malformed", v1alpha1.Step{Name: "build", Image: "alpine:3", Script: "echo $(params.)"}),
			wantErr: []string{
				`spec.steps[0].script: Invalid value: step "build": malformed param reference "$(params.)": empty name`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.task)
			checkAdmission(t, err, tc.wantErr)
		})
	}
}

// testUpdate checks that an update is judged by the spec it writes, and that
// a spec an update leaves as it was is not judged again.
func testUpdate(t *testing.T, env *testenv.Env, ns string) {
	ctx := context.Background()
	task := betaTask(ns, "beta-update", []v1beta1.ParamSpec{{Name: "greeting"}},
		v1beta1.Step{Name: "say", Image: "alpine:3", Script: "echo $(params.greeting)"})
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatalf("creating %s: %v", task.Name, err)
	}

	task.Spec.Params = nil
	checkAdmission(t, env.Client.Update(ctx, task), []string{
		`spec.steps[0].script: Invalid value: "$(params.greeting)": step "say" uses undeclared param "greeting"`,
	})

	alpha := &v1alpha1.Task{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(task), alpha); err != nil {
		t.Fatalf("getting %s as v1alpha1: %v", task.Name, err)
	}
	alpha.Labels = map[string]string{"edited": "true"}
	checkAdmission(t, env.Client.Update(ctx, alpha), nil)
	alpha.Spec.Steps[0].Script = "echo $(params.other)"
	checkAdmission(t, env.Client.Update(ctx, alpha), []string{
		`spec.steps[0].script: Invalid value: "$(params.other)": step "say" uses undeclared param "other"`,
	})
}

// testKubectlApply checks the message a user of kubectl sees.
func testKubectlApply(t *testing.T, env *testenv.Env, ns string) {
	manifest := `apiVersion: minitask.dev/v1alpha1
kind: Task
metadata:
  name: kubectl-undeclared
  namespace: ` + ns + `
spec:
  steps:
  - name: say
    image: alpine:3
  - name: build
    image: alpine:3
    script: echo "$(params.greeting)"
`
	file := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := env.RunKubectl("apply", "-f", file)
	if err == nil {
		t.Fatalf("kubectl apply succeeded, want it rejected:\n%s", out)
	}
	want := `spec.steps[1].script: Invalid value: "$(params.greeting)": step "build" uses undeclared param "greeting"`
	if !strings.Contains(stderr, want) {
		t.Errorf("kubectl apply printed:\n%s\nwant it to contain:\n%s", stderr, want)
	}
}

// checkAdmission fails t unless err is nil and wantErr is empty, or err is an
// Invalid status whose message contains every string in wantErr.
func checkAdmission(t *testing.T, err error, wantErr []string) {
	t.Helper()
	switch {
	case len(wantErr) == 0 && err != nil:
		t.Fatalf("rejected: %v", err)
	case len(wantErr) == 0:
		return
	case err == nil:
		t.Fatalf("accepted, want rejected with %q", wantErr)
	case !apierrors.IsInvalid(err):
		t.Fatalf("error %v is not Invalid", err)
	}
	for _, want := range wantErr {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not contain %q", err, want)
		}
	}
}

func betaTask(ns, name string, params []v1beta1.ParamSpec, steps ...v1beta1.Step) *v1beta1.Task {
	return &v1beta1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1beta1.TaskSpec{Params: params, Steps: steps},
	}
}

func withWorkspaces(task *v1beta1.Task, names ...string) *v1beta1.Task {
	for _, n := range names {
		task.Spec.Workspaces = append(task.Spec.Workspaces, v1beta1.WorkspaceDeclaration{Name: n})
	}
	return task
}

func alphaTask(ns, name string, steps ...v1alpha1.Step) *v1alpha1.Task {
	return &v1alpha1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.TaskSpec{Steps: steps},
	}
}
