package validation_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The stashes that give param files the type array: a v1beta1 writer's,
// and a v1alpha1 writer's, whose v1beta1 member holds the default's text.
const (
	betaArrayStash  = `{"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`
	alphaArrayStash = `{"v1beta1":{"spec":{"params":[{"name":"files","default":"[\"a.go\"]"}]}},"v1":{"spec":{"params":[{"name":"files","type":"array"}]}}}`
)

// testTypedParams checks that a Task's typed params are judged the same
// whichever version writes them: through v1, and through v1beta1 and
// v1alpha1 carrying the types in the conversion annotation.
func testTypedParams(t *testing.T, env *testenv.Env, ns string) {
	const asString = `spec.steps[0].script: Invalid value: "$(params.files)": step "lint": param "files" is an array, which cannot be used as a string; write $(params.files[*]) as a whole item of command or args, for one item per element`
	files := v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewArrayValue("a.go")}
	v1Task := func(name string, params []v1.ParamSpec, step v1.Step) *v1.Task {
		return &v1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.TaskSpec{Params: params, Steps: []v1.Step{step}}}
	}
	tests := map[string]struct {
		task    client.Object
		wantErr []string
	}{
		"v1 valid": {
			task: v1Task("v1-valid", []v1.ParamSpec{files,
				{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}}, Default: v1.NewObjectValue(map[string]string{"repo": "r"})}},
				v1.Step{Name: "lint", Image: "$(params.image.repo)", Command: []string{"gofmt"}, Args: []string{"-l", "$(params.files[*])"}}),
		},
		"v1 array used as a string": {
			task:    v1Task("v1-as-string", []v1.ParamSpec{files}, v1.Step{Name: "lint", Image: "alpine:3", Script: "echo $(params.files)"}),
			wantErr: []string{`Task.minitask.dev "v1-as-string" is invalid`, asString},
		},
		"v1 every typed rule at once": {
			task: v1Task("v1-every-rule", []v1.ParamSpec{
				{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewStringValue("a.go")},
				{Name: "image", Type: v1.ParamTypeObject},
				{Name: "mode", Properties: map[string]v1.PropertySpec{"a": {}}},
				{Name: "tag", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"v": {}}, Default: v1.NewObjectValue(map[string]string{})},
			}, v1.Step{Name: "lint", Image: "alpine:$(params.tag.w)", Args: []string{"--files=$(params.files[*])", "$(params.mode[*])", "$(params.mode.a)"}}),
			wantErr: []string{
				`spec.params[0].default: Invalid value: param "files": the default is a string, but the param is an array`,
				`spec.params[1].properties: Required value: param "image" is an object: declare each of its keys in properties`,
				`spec.params[2].properties: Forbidden: param "mode" is a string: only an object param declares properties`,
				`spec.params[3].default: Invalid value: param "tag": the default lacks the keys the param declares: v`,
				`spec.steps[0].image: Invalid value: "$(params.tag.w)": step "lint": param "tag" declares no key "w" in its properties (it declares v)`,
				`spec.steps[0].args[0]: Invalid value: "$(params.files[*])": step "lint": $(params.files[*]) may only be a whole item of command or args`,
				`spec.steps[0].args[1]: Invalid value: "$(params.mode[*])": step "lint": $(params.mode[*]) stands for an array's items, but param "mode" is a string`,
				`spec.steps[0].args[2]: Invalid value: "$(params.mode.a)": step "lint": $(params.mode.a) names a key, but param "mode" is a string`,
			},
		},
		"v1beta1 with the type in its annotation, valid": {
			task: &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta-typed-valid",
				Annotations: map[string]string{conversion.AnnotationConversionData: betaArrayStash}},
				Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptr.To(`["a.go"]`)}},
					Steps: []v1beta1.Step{{Name: "lint", Image: "golang:1.26", Args: []string{"$(params.files[*])"}}}}},
		},
		"v1beta1 with the type in its annotation, used as a string": {
			task: &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta-as-string",
				Annotations: map[string]string{conversion.AnnotationConversionData: betaArrayStash}},
				Spec: v1beta1.TaskSpec{Params: []v1beta1.ParamSpec{{Name: "files", Default: ptr.To(`["a.go"]`)}},
					Steps: []v1beta1.Step{{Name: "lint", Image: "alpine:3", Script: "echo $(params.files)"}}}},
			wantErr: []string{`Task.minitask.dev "beta-as-string" is invalid`, asString},
		},
		"v1alpha1 with the type in its annotation, used as a string": {
			task: &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alpha-as-string",
				Annotations: map[string]string{conversion.AnnotationConversionData: alphaArrayStash}},
				Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "lint", Image: "alpine:3", Script: "echo $(params.files)"}}}},
			wantErr: []string{`Task.minitask.dev "alpha-as-string" is invalid`, asString},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkAdmission(t, env.Client.Create(context.Background(), tc.task), tc.wantErr)
		})
	}
}
