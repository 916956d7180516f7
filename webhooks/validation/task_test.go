package validation

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

const notName = ` does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$`

func TestValidateTask(t *testing.T) {
	tests := map[string]validateTaskCase{
		"no params used": {
			task: wrappers.Task("default", "t").Step("build", "alpine:3", "echo hi").Obj(),
		},
		"shell syntax is not a param": {
			task: wrappers.Task("default", "t").Step("build", "alpine:3", `echo "$HOME" $(date) ${X}`).Obj(),
		},
		"declared with default": {
			task: wrappers.Task("default", "t").ParamDefault("greeting", "hello").
				Step("say", "alpine:3", `echo "$(params.greeting)"`).Obj(),
		},
		"declared without default": {
			task: wrappers.Task("default", "t").Param("greeting").
				Step("say", "alpine:3", `echo "$(params.greeting)"`).Obj(),
		},
		"declared params in image and script": {
			task: wrappers.Task("default", "t").Param("tag").ParamDefault("greeting", "").
				Step("say", "alpine:$(params.tag)", "echo $(params.greeting) $(params.greeting)").Obj(),
		},
		"undeclared in image": {
			task: wrappers.Task("default", "t").Step("build", "alpine:$(params.tag)", "").Obj(),
			want: []string{`spec.steps[0].image: Invalid value: "$(params.tag)": step "build" uses undeclared param "tag"`},
		},
		"undeclared in script": {
			task: wrappers.Task("default", "t").ParamDefault("name", "x").
				Step("clone", "git", "git clone $(params.name)").
				Step("build", "alpine:3", "echo $(params.greeting)").Obj(),
			want: []string{`spec.steps[1].script: Invalid value: "$(params.greeting)": step "build" uses undeclared param "greeting"`},
		},
		"names are case sensitive": {
			task: wrappers.Task("default", "t").Param("greeting").Step("say", "alpine:3", "echo $(params.Greeting)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: "$(params.Greeting)": step "say" uses undeclared param "Greeting"`},
		},
		"a param repeated in one field is reported once": {
			task: wrappers.Task("default", "t").Step("say", "alpine:3", "echo $(params.x) $(params.x)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: "$(params.x)": step "say" uses undeclared param "x"`},
		},
		"several problems at once, in order": {
			task: wrappers.Task("default", "t").Param("ok").
				Step("one", "img:$(params.tag)", "echo $(params.ok) $(params.a) $(params.b)").
				Step("two", "alpine:3", "echo $(params.).").
				Step("three", "$(params.tag)", "echo $(params.a)").Obj(),
			want: []string{
				`spec.steps[0].image: Invalid value: "$(params.tag)": step "one" uses undeclared param "tag"`,
				`spec.steps[0].script: Invalid value: "$(params.a)": step "one" uses undeclared param "a"`,
				`spec.steps[0].script: Invalid value: "$(params.b)": step "one" uses undeclared param "b"`,
				`spec.steps[1].script: Invalid value: step "two": malformed param reference "$(params.)": empty name`,
				`spec.steps[2].image: Invalid value: "$(params.tag)": step "three" uses undeclared param "tag"`,
				`spec.steps[2].script: Invalid value: "$(params.a)": step "three" uses undeclared param "a"`,
			},
		},
		"malformed: empty name": {
			task: wrappers.Task("default", "t").Step("build", "alpine:3", "echo $(params.)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: step "build": malformed param reference "$(params.)": empty name`},
		},
		"malformed: unclosed": {
			task: wrappers.Task("default", "t").Param("x").Step("build", "alpine:3", "echo $(params.x").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: step "build": malformed param reference "$(params.x": missing ")"`},
		},
		"malformed: unclosed without name": {
			task: wrappers.Task("default", "t").Step("build", "alpine:$(params.", "").Obj(),
			want: []string{`spec.steps[0].image: Invalid value: step "build": malformed param reference "$(params.": missing ")"`},
		},
		"declared workspaces and params in every field": {
			task: wrappers.Task("default", "t").Param("tag").Workspace("src").Workspace("cache").Steps(v1.Step{
				Name: "build", Image: "golang:$(params.tag)",
				Command:    []string{"go", "-C", "$(workspaces.src.path)"},
				Args:       []string{"build", "-o", "$(workspaces.cache.path)/$(params.tag)"},
				WorkingDir: "$(workspaces.src.path)",
				Env:        []corev1.EnvVar{{Name: "TAG", Value: "$(params.tag)"}, {Name: "CACHE", Value: "$(workspaces.cache.path)"}},
			}).Obj(),
		},
		"undeclared workspace in a script": {
			task: wrappers.Task("default", "t").Workspace("src").
				Step("build", "alpine:3", "cd $(workspaces.src.path) && cp -r . $(workspaces.out.path)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: "$(workspaces.out.path)": step "build" uses undeclared workspace "out"`},
		},
		"a param's name is no workspace's, and a workspace's no param's": {
			task: wrappers.Task("default", "t").Param("src").Workspace("out").
				Step("build", "alpine:3", "cd $(workspaces.src.path) $(params.out)").Obj(),
			want: []string{
				`spec.steps[0].script: Invalid value: "$(workspaces.src.path)": step "build" uses undeclared workspace "src"`,
				`spec.steps[0].script: Invalid value: "$(params.out)": step "build" uses undeclared param "out"`,
			},
		},
		"undeclared in command, args, workingDir and env values, each named by its path": {
			task: wrappers.Task("default", "t").Steps(
				v1.Step{Name: "a", Image: "alpine:3", Script: "true"},
				v1.Step{
					Name: "b", Image: "alpine:3",
					Command:    []string{"run", "$(params.cmd)"},
					Args:       []string{"--in", "$(workspaces.in.path)", "$(params.arg)"},
					WorkingDir: "$(workspaces.wd.path)",
					Env: []corev1.EnvVar{
						{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
						{Name: "GREETING", Value: "$(params.greeting)"},
					},
				}).Obj(),
			want: []string{
				`spec.steps[1].command[1]: Invalid value: "$(params.cmd)": step "b" uses undeclared param "cmd"`,
				`spec.steps[1].args[1]: Invalid value: "$(workspaces.in.path)": step "b" uses undeclared workspace "in"`,
				`spec.steps[1].args[2]: Invalid value: "$(params.arg)": step "b" uses undeclared param "arg"`,
				`spec.steps[1].workingDir: Invalid value: "$(workspaces.wd.path)": step "b" uses undeclared workspace "wd"`,
				`spec.steps[1].env[1].value: Invalid value: "$(params.greeting)": step "b" uses undeclared param "greeting"`,
			},
		},
		"malformed workspace references, each named by its field": {
			task: wrappers.Task("default", "t").Workspace("src").Steps(v1.Step{
				Name: "build", Image: "alpine:3",
				Args:       []string{"$(workspaces.src)"},
				WorkingDir: "$(workspaces.src.other)",
				Env:        []corev1.EnvVar{{Name: "A", Value: "$(workspaces..path)"}, {Name: "B", Value: "$(workspaces.src.path"}},
			}).Obj(),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: step "build": malformed workspace reference "$(workspaces.src)": missing ".path" after the workspace's name: write $(workspaces.src.path)`,
				`spec.steps[0].workingDir: Invalid value: step "build": malformed workspace reference "$(workspaces.src.other)": unknown field "other" of workspace "src": only "path" may be referred to`,
				`spec.steps[0].env[0].value: Invalid value: step "build": malformed workspace reference "$(workspaces..path)": empty name`,
				`spec.steps[0].env[1].value: Invalid value: step "build": malformed workspace reference "$(workspaces.src.path": missing ")"`,
			},
		},
		"malformed param in an env value": {
			task: wrappers.Task("default", "t").Param("x").Steps(v1.Step{
				Name: "build", Image: "alpine:3", Env: []corev1.EnvVar{{Name: "X", Value: "$(params.x"}},
			}).Obj(),
			want: []string{`spec.steps[0].env[0].value: Invalid value: step "build": malformed param reference "$(params.x": missing ")"`},
		},
		"declared results used everywhere references are replaced": {
			task: wrappers.Task("default", "t").Steps(
				v1.Step{Name: "tool", Image: "tool", Command: []string{"tool", "--out=$(results.digest.path)"},
					WorkingDir: "/tmp", Env: []corev1.EnvVar{{Name: "V", Value: "$(results.version.path)"}}},
				v1.Step{Name: "report", Image: "alpine:3", Script: "printf 1 > $(results.version.path)"},
			).Results("digest", "version").Obj(),
		},
		"undeclared result": {
			task: wrappers.Task("default", "t").
				Step("report", "alpine:3", "echo 1 > $(results.tag.path); echo 2 > $(results.version.path)").Results("version").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: "$(results.tag.path)": step "report" uses undeclared result "tag"`},
		},
		"a result's name is no param's": {
			task: wrappers.Task("default", "t").Param("digest").
				Step("report", "alpine:3", "echo $(params.digest) > $(results.digest.path)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: "$(results.digest.path)": step "report" uses undeclared result "digest"`},
		},
		"malformed result references": {
			task: wrappers.Task("default", "t").Steps(v1.Step{
				Name: "report", Image: "alpine:3", Script: "echo > $(results.digest)",
				Env: []corev1.EnvVar{{Name: "A", Value: "$(results.digest.value)"}, {Name: "B", Value: "$(results.digest.path"}},
			}).Results("digest").Obj(),
			want: []string{
				`spec.steps[0].script: Invalid value: step "report": malformed result reference "$(results.digest)": missing ".path" after the result's name: write $(results.digest.path)`,
				`spec.steps[0].env[0].value: Invalid value: step "report": malformed result reference "$(results.digest.value)": unknown field "value" of result "digest": only "path" may be referred to`,
				`spec.steps[0].env[1].value: Invalid value: step "report": malformed result reference "$(results.digest.path": missing ")"`,
			},
		},
		"results need a last step with a script": {
			task: wrappers.Task("default", "t").Steps(
				v1.Step{Name: "report", Image: "alpine:3", Script: "echo 1 > $(results.digest.path)"},
				v1.Step{Name: "push", Image: "pusher", Command: []string{"push"}},
			).Results("digest").Obj(),
			want: []string{`spec.steps[1]: Invalid value: "push": the Task declares results (spec.results), so its last step must have a script: only a script step hands results back, and step "push" runs a command or its image's entrypoint; add a script step after it`},
		},
		"results and one step, its image's entrypoint": {
			task: wrappers.Task("default", "t").Step("only", "alpine:3", "").Results("digest").Obj(),
			want: []string{`spec.steps[0]: Invalid value: "only": the Task declares results (spec.results), so its last step must have a script: only a script step hands results back, and step "only" runs a command or its image's entrypoint; add a script step after it`},
		},
		"no results: any last step": {
			task: wrappers.Task("default", "t").Steps(v1.Step{Name: "push", Image: "pusher", Command: []string{"push"}}).Obj(),
		},
		"a workspace mounted where the results are": {
			task: wrappers.Task("default", "t").Workspaces(
				v1.WorkspaceDeclaration{Name: "a", MountPath: "/minitask/results"},
				v1.WorkspaceDeclaration{Name: "b", MountPath: "/minitask/results/sub/"},
				v1.WorkspaceDeclaration{Name: "c", MountPath: "/minitask/resultsandmore"},
				v1.WorkspaceDeclaration{Name: "d", MountPath: "/minitask"},
			).Step("report", "alpine:3", "true").Results("digest").Obj(),
			want: []string{
				`spec.workspaces[0].mountPath: Invalid value: "/minitask/results": the Task declares results (spec.results), whose files every step finds in /minitask/results; mount workspace "a" elsewhere`,
				`spec.workspaces[1].mountPath: Invalid value: "/minitask/results/sub/": the Task declares results (spec.results), whose files every step finds in /minitask/results; mount workspace "b" elsewhere`,
			},
		},
		"malformed: bad name even if declared-looking": {
			task: wrappers.Task("default", "t").Param("a").Step("build", "alpine:3", "echo $(params.a b)").Obj(),
			want: []string{`spec.steps[0].script: Invalid value: step "build": malformed param reference "$(params.a b)": name "a b"` + notName},
		},
	}
	checkValidateTask(t, tests)
}

// validateTaskCase is a Task and the errors validateTask finds in it.
type validateTaskCase struct {
	task *v1.Task
	want []string
}

// checkValidateTask runs validateTask on each case's Task.
func checkValidateTask(t *testing.T, tests map[string]validateTaskCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, err := range validateTask(tc.task) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("validateTask (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskValidator(t *testing.T) {
	valid := wrappers.Task("default", "greet").Param("greeting").Step("say", "alpine:3", "echo $(params.greeting)").Obj()
	undeclared := wrappers.Task("default", "greet").Step("say", "alpine:3", "echo $(params.greeting)").Obj()
	undeclaredRelabelled := undeclared.DeepCopy()
	undeclaredRelabelled.Labels = map[string]string{"team": "a"}
	undeclaredEdited := wrappers.Task("default", "greet").Step("say", "alpine:4", "echo $(params.greeting)").Obj()

	const invalidMsg = `Task.minitask.dev "greet" is invalid: spec.steps[0].script: Invalid value: "$(params.greeting)": step "say" uses undeclared param "greeting"`
	v := TaskValidator{}
	ctx := context.Background()
	tests := map[string]struct {
		validate func() error
		want     string
	}{
		"create valid":   {validate: func() error { _, err := v.ValidateCreate(ctx, valid); return err }},
		"create invalid": {validate: func() error { _, err := v.ValidateCreate(ctx, undeclared); return err }, want: invalidMsg},
		"update to valid": {
			validate: func() error { _, err := v.ValidateUpdate(ctx, undeclared, valid); return err },
		},
		"update to invalid": {
			validate: func() error { _, err := v.ValidateUpdate(ctx, valid, undeclared); return err }, want: invalidMsg,
		},
		"update of an invalid spec that stays invalid": {
			validate: func() error { _, err := v.ValidateUpdate(ctx, undeclared, undeclaredEdited); return err }, want: invalidMsg,
		},
		"update that leaves an invalid spec as it was": {
			validate: func() error { _, err := v.ValidateUpdate(ctx, undeclared, undeclaredRelabelled); return err },
		},
		"delete invalid": {validate: func() error { _, err := v.ValidateDelete(ctx, undeclared); return err }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.validate()
			got := ""
			if err != nil {
				got = err.Error()
				if !apierrors.IsInvalid(err) {
					t.Errorf("error %q is not an Invalid status", got)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidStatusNamesFields checks the status the API server relays: its
// causes carry the field paths that kubectl prints.
func TestInvalidStatusNamesFields(t *testing.T) {
	task := wrappers.Task("default", "greet").Step("a", "$(params.x)", "").Step("b", "alpine:3", "echo $(params.y)").Obj()
	_, err := TaskValidator{}.ValidateCreate(context.Background(), task)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("ValidateCreate error %v is not an API status", err)
	}
	var got []string
	for _, c := range status.Status().Details.Causes {
		got = append(got, c.Field+" "+string(c.Type))
	}
	want := []string{"spec.steps[0].image FieldValueInvalid", "spec.steps[1].script FieldValueInvalid"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if d := status.Status().Details; d.Kind != "Task" || d.Group != "minitask.dev" || d.Name != "greet" {
		t.Errorf("details name %s.%s %q, want Task.minitask.dev \"greet\"", d.Kind, d.Group, d.Name)
	}
	if !strings.Contains(status.Status().Message, `step "b" uses undeclared param "y"`) {
		t.Errorf("message %q does not name step b and param y", status.Status().Message)
	}
}
