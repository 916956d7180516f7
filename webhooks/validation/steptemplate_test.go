package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestValidateTaskStepTemplate: the stepTemplate's env values are every
// step's, references replaced as in a step's own, so they are judged as a
// step's env is. What the CRD's schema already refuses (an env name twice,
// a pull policy that is none) is not judged again.
func TestValidateTaskStepTemplate(t *testing.T) {
	templated := func(env ...corev1.EnvVar) *v1.Task {
		task := wrappers.Task("default", "t").
			Params(v1.ParamSpec{Name: "mode", Default: v1.NewStringValue("mod")}, v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray}).
			Workspace("source").Step("build", "golang:1", "go build").Obj()
		task.Spec.StepTemplate = &v1.StepTemplate{Env: env}
		return task
	}
	tests := map[string]validateTaskCase{
		"declared references": {
			task: templated(corev1.EnvVar{Name: "GOFLAGS", Value: "-mod=$(params.mode)"}, corev1.EnvVar{Name: "SRC", Value: "$(workspaces.source.path)"}),
		},
		"a value from a Secret": {
			task: templated(corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}}),
		},
		"undeclared": {
			task: templated(corev1.EnvVar{Name: "A", Value: "ok"}, corev1.EnvVar{Name: "B", Value: "$(params.tag) $(workspaces.cache.path)"}),
			want: []string{
				`spec.stepTemplate.env[1].value: Invalid value: "$(params.tag)": the stepTemplate uses undeclared param "tag"`,
				`spec.stepTemplate.env[1].value: Invalid value: "$(workspaces.cache.path)": the stepTemplate uses undeclared workspace "cache"`,
			},
		},
		"malformed": {
			task: templated(corev1.EnvVar{Name: "A", Value: "$(params.)"}),
			want: []string{`spec.stepTemplate.env[0].value: Invalid value: the stepTemplate: malformed param reference "$(params.)": empty name`},
		},
		"an array param where only a string fits": {
			task: templated(corev1.EnvVar{Name: "FILES", Value: "$(params.files[*])"}),
			want: []string{`spec.stepTemplate.env[0].value: Invalid value: "$(params.files[*])": the stepTemplate: $(params.files[*]) may only be a whole item of command or args, ` +
				`which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`},
		},
		"a step's security context and pull policy": {
			task: wrappers.Task("default", "t").Steps(v1.Step{Name: "build", Image: "golang:1", Script: "go build",
				SecurityContext: &corev1.SecurityContext{}, ImagePullPolicy: v1.PullNever}).Obj(),
		},
	}
	checkValidateTask(t, tests)
}
