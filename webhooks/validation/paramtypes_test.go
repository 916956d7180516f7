package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// arrayParam declares an array param, with a default when items are given.
func arrayParam(name string, items ...string) v1.ParamSpec {
	p := v1.ParamSpec{Name: name, Type: v1.ParamTypeArray}
	if items != nil {
		p.Default = v1.NewArrayValue(items...)
	}
	return p
}

// imageParam declares an object param, image, with the keys given, and
// def as its default unless nil.
func imageParam(def map[string]string, keys ...string) v1.ParamSpec {
	p := v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{}}
	for _, k := range keys {
		p.Properties[k] = v1.PropertySpec{}
	}
	if def != nil {
		p.Default = v1.NewObjectValue(def)
	}
	return p
}

// typedTask is a Task declaring params whose one step runs command and
// args, with env values env.
func typedTask(params []v1.ParamSpec, command, args []string, env ...string) *v1.Task {
	step := v1.Step{Name: "lint", Image: "golang:1.26", Command: command, Args: args}
	for i, e := range env {
		step.Env = append(step.Env, corev1.EnvVar{Name: "E" + string(rune('A'+i)), Value: e})
	}
	return wrappers.Task("default", "t").Params(params...).Steps(step).Obj()
}

func TestValidateTypedParams(t *testing.T) {
	files := arrayParam("files", "a.go", "b.go")
	image := imageParam(map[string]string{"repo": "example.org/app", "tag": "latest"}, "repo", "tag")
	long := strings.Repeat("x", MaxValueBytes+1)
	tests := map[string]validateTaskCase{
		"each type used as it may be": {
			task: typedTask([]v1.ParamSpec{files, image, {Name: "mode", Type: v1.ParamTypeString, Default: v1.NewStringValue("check")}},
				[]string{"gofmt", "$(params.files[*])"}, []string{"-$(params.mode)", "$(params.files[*])", "$(params.image.repo):$(params.image.tag)"},
				"$(params.image.repo)"),
		},
		"an array and an object without defaults": {
			task: typedTask([]v1.ParamSpec{arrayParam("files"), imageParam(nil, "repo")},
				nil, []string{"$(params.files[*])", "$(params.image.repo)"}),
		},
		"an object default may give keys it does not declare": {
			task: typedTask([]v1.ParamSpec{imageParam(map[string]string{"repo": "r", "extra": "e"}, "repo")}, nil, nil),
		},
		"a string default, its strings at the limit": {
			task: typedTask([]v1.ParamSpec{{Name: "s", Default: v1.NewStringValue(long[1:])}, arrayParam("a", long[1:])}, nil, nil),
		},
		"defaults of the wrong type": {
			task: typedTask([]v1.ParamSpec{
				{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewStringValue("a.go")},
				{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}}, Default: v1.NewArrayValue("r")},
				{Name: "mode", Default: v1.NewObjectValue(map[string]string{"a": "b"})},
			}, nil, nil),
			want: []string{
				`spec.params[0].default: Invalid value: param "files": the default is a string, but the param is an array`,
				`spec.params[1].default: Invalid value: param "image": the default is an array, but the param is an object`,
				`spec.params[2].default: Invalid value: param "mode": the default is an object, but the param is a string`,
			},
		},
		"an object default without a declared key": {
			task: typedTask([]v1.ParamSpec{imageParam(map[string]string{"repo": "r"}, "repo", "tag", "digest")}, nil, nil),
			want: []string{`spec.params[0].default: Invalid value: param "image": the default lacks the keys the param declares: digest, tag`},
		},
		"properties on a param that is no object": {
			task: typedTask([]v1.ParamSpec{
				{Name: "files", Type: v1.ParamTypeArray, Properties: map[string]v1.PropertySpec{"a": {}}},
				{Name: "mode", Properties: map[string]v1.PropertySpec{"a": {}}},
			}, nil, nil),
			want: []string{
				`spec.params[0].properties: Forbidden: param "files" is an array: only an object param declares properties; remove them, or give the param type: object`,
				`spec.params[1].properties: Forbidden: param "mode" is a string: only an object param declares properties; remove them, or give the param type: object`,
			},
		},
		"an object without properties": {
			task: typedTask([]v1.ParamSpec{{Name: "image", Type: v1.ParamTypeObject, Default: v1.NewObjectValue(map[string]string{"repo": "r"})}},
				nil, []string{"$(params.image.repo)"}),
			want: []string{`spec.params[0].properties: Required value: param "image" is an object: declare each of its keys in properties (properties: {KEY: {}}), so that every $(params.image.KEY) the steps use can be checked`},
		},
		"keys no reference can name": {
			task: typedTask([]v1.ParamSpec{imageParam(nil, "repo", "a.b", "", "tag!", "my_key-2")}, nil, nil),
			want: []string{
				`spec.params[0].properties[]: Invalid value: "": param "image": no reference can name this key, $(params.image.KEY) takes letters, digits, '_' and '-' only; rename it`,
				`spec.params[0].properties[a.b]: Invalid value: "a.b": param "image": no reference can name this key, $(params.image.KEY) takes letters, digits, '_' and '-' only; rename it`,
				`spec.params[0].properties[tag!]: Invalid value: "tag!": param "image": no reference can name this key, $(params.image.KEY) takes letters, digits, '_' and '-' only; rename it`,
			},
		},
		"strings of a default past 64 KiB": {
			task: typedTask([]v1.ParamSpec{
				{Name: "s", Default: v1.NewStringValue(long)},
				arrayParam("files", "a.go", long),
				imageParam(map[string]string{"repo": long, "tag": "t"}, "repo", "tag"),
			}, nil, nil),
			want: []string{
				`spec.params[0].default: Too long: may not be more than 65536 bytes`,
				`spec.params[1].default[1]: Too long: may not be more than 65536 bytes`,
				`spec.params[2].default[repo]: Too long: may not be more than 65536 bytes`,
			},
		},
		"[*] anywhere but a whole item of command or args": {
			task: wrappers.Task("default", "t").Params(files).Steps(v1.Step{
				Name: "lint", Image: "golang:1.26", Command: []string{"gofmt"},
				Args:       []string{"--files=$(params.files[*])", "$(params.files[*]) $(params.files[*])"},
				WorkingDir: "/src/$(params.files[*])",
				Env:        []corev1.EnvVar{{Name: "FILES", Value: "$(params.files[*])"}},
			}, v1.Step{Name: "report", Image: "alpine:3", Script: "echo $(params.files[*])"}).Obj(),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: "$(params.files[*])": step "lint": $(params.files[*]) may only be a whole item of command or args, which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`,
				`spec.steps[0].args[1]: Invalid value: "$(params.files[*])": step "lint": $(params.files[*]) may only be a whole item of command or args, which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`,
				`spec.steps[0].workingDir: Invalid value: "$(params.files[*])": step "lint": $(params.files[*]) may only be a whole item of command or args, which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`,
				`spec.steps[0].env[0].value: Invalid value: "$(params.files[*])": step "lint": $(params.files[*]) may only be a whole item of command or args, which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`,
				`spec.steps[1].script: Invalid value: "$(params.files[*])": step "report": $(params.files[*]) may only be a whole item of command or args, which becomes one item per element of the array; make it an item of its own there (args: ["$(params.files[*])"])`,
			},
		},
		"[*] of a param that is no array": {
			task: typedTask([]v1.ParamSpec{{Name: "mode"}, image}, nil, []string{"$(params.mode[*])", "$(params.image[*])"}),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: "$(params.mode[*])": step "lint": $(params.mode[*]) stands for an array's items, but param "mode" is a string; write $(params.mode)`,
				`spec.steps[0].args[1]: Invalid value: "$(params.image[*])": step "lint": $(params.image[*]) stands for an array's items, but param "image" is an object; write one of its keys, as $(params.image.repo)`,
			},
		},
		"a key of a param that is no object": {
			task: typedTask([]v1.ParamSpec{{Name: "mode"}, files}, nil, []string{"$(params.mode.a)"}, "$(params.files.first)"),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: "$(params.mode.a)": step "lint": $(params.mode.a) names a key, but param "mode" is a string, which has no keys; write $(params.mode)`,
				`spec.steps[0].env[0].value: Invalid value: "$(params.files.first)": step "lint": $(params.files.first) names a key, but param "files" is an array, which has no keys; write $(params.files[*]) as a whole item of command or args, for one item per element`,
			},
		},
		"a key the properties do not declare": {
			task: typedTask([]v1.ParamSpec{image}, nil, []string{"$(params.image.digest)", "$(params.image.Repo)"}),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: "$(params.image.digest)": step "lint": param "image" declares no key "digest" in its properties (it declares repo, tag)`,
				`spec.steps[0].args[1]: Invalid value: "$(params.image.Repo)": step "lint": param "image" declares no key "Repo" in its properties (it declares repo, tag)`,
			},
		},
		"an array or object used as a string": {
			task: wrappers.Task("default", "t").Params(files, image).Steps(v1.Step{
				Name: "lint", Image: "$(params.image)", Command: []string{"gofmt", "$(params.files)"},
				Env: []corev1.EnvVar{{Name: "FILES", Value: "$(params.files) and $(params.files)"}},
			}).Obj(),
			want: []string{
				`spec.steps[0].image: Invalid value: "$(params.image)": step "lint": param "image" is an object, which cannot be used as a string; write one of its keys, as $(params.image.repo)`,
				`spec.steps[0].command[1]: Invalid value: "$(params.files)": step "lint": param "files" is an array, which cannot be used as a string; write $(params.files[*]) as a whole item of command or args, for one item per element`,
				`spec.steps[0].env[0].value: Invalid value: "$(params.files)": step "lint": param "files" is an array, which cannot be used as a string; write $(params.files[*]) as a whole item of command or args, for one item per element`,
			},
		},
		"undeclared typed references are undeclared": {
			task: typedTask(nil, nil, []string{"$(params.files[*])", "$(params.image.repo)"}),
			want: []string{
				`spec.steps[0].args[0]: Invalid value: "$(params.files[*])": step "lint" uses undeclared param "files"`,
				`spec.steps[0].args[1]: Invalid value: "$(params.image.repo)": step "lint" uses undeclared param "image"`,
			},
		},
	}
	checkValidateTask(t, tests)
}
