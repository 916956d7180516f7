package conversion

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

func TestConvertTaskFromHub(t *testing.T) {
	tests := map[string]struct {
		hub  *v1beta1.Task
		want *v1alpha1.Task
	}{
		"steps map field by field, in order; all fields map, so no annotation": {
			hub: hubTask().Steps(
				v1beta1.Step{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
				v1beta1.Step{Name: "test", Image: "golang:1.26"},
			).Obj(),
			want: spokeTask().Steps(
				v1alpha1.Step{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
				v1alpha1.Step{Name: "test", Image: "golang:1.26"},
			).Obj(),
		},
		"no spec": {
			hub:  hubTask().Steps().Obj(),
			want: spokeTask().Steps().Obj(),
		},
		"description is stashed": {
			hub:  hubTask().Description("Builds it").Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"description":"Builds it"}}`)).Obj(),
		},
		"params are stashed, an empty default apart from an absent one": {
			hub: hubTask().Params(
				v1beta1.ParamSpec{Name: "greeting", Description: "What to say", Default: ptr.To("hello")},
				v1beta1.ParamSpec{Name: "suffix", Default: ptr.To("")},
				v1beta1.ParamSpec{Name: "target"},
			).Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"params":[` +
				`{"name":"greeting","description":"What to say","default":"hello"},` +
				`{"name":"suffix","default":""},{"name":"target"}]}}`)).Obj(),
		},
		"description and params share one annotation": {
			hub:  hubTask().Description("Says hi").Params(v1beta1.ParamSpec{Name: "greeting"}).Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"description":"Says hi","params":[{"name":"greeting"}]}}`)).Obj(),
		},
		"workspaces are stashed, readOnly false apart from absent": {
			hub: hubTask().Workspaces(
				v1beta1.WorkspaceDeclaration{Name: "source", Description: "The checked-out repository", MountPath: "/workspace/source", ReadOnly: ptr.To(false)},
				v1beta1.WorkspaceDeclaration{Name: "cache", ReadOnly: ptr.To(true)},
				v1beta1.WorkspaceDeclaration{Name: "scratch"},
			).Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"workspaces":[` +
				`{"name":"source","description":"The checked-out repository","mountPath":"/workspace/source","readOnly":false},` +
				`{"name":"cache","readOnly":true},{"name":"scratch"}]}}`)).Obj(),
		},
		"an empty workspaces list is not stashed": {
			hub:  hubTask().Workspaces([]v1beta1.WorkspaceDeclaration{}...).Obj(),
			want: spokeTask().Obj(),
		},
		"an empty params list is not stashed": {
			hub:  hubTask().Params([]v1beta1.ParamSpec{}...).Obj(),
			want: spokeTask().Obj(),
		},
		"annotation created on an object that had none": {
			hub:  hubTask().Annotations(nil).Description("d").Obj(),
			want: spokeTask().Annotations(nil).Annotation(stashed(`{"spec":{"description":"d"}}`)).Obj(),
		},
		"a stale annotation on the hub is dropped when nothing is lost": {
			hub:  hubTask().Annotation(AnnotationConversionData, `{"v1beta1":{"spec":{"description":"old"}}}`).Obj(),
			want: spokeTask().Obj(),
		},
		"a stale annotation on the hub is replaced": {
			hub:  hubTask().Annotation(AnnotationConversionData, "garbage").Description("new").Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"description":"new"}}`)).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkFromHub(t, ConvertBetaTaskToAlpha, tc.hub, tc.want)
		})
	}
}

func TestConvertTaskToHub(t *testing.T) {
	tests := map[string]struct {
		spoke *v1alpha1.Task
		want  *v1beta1.Task
	}{
		"steps map field by field, in order": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
				v1alpha1.Step{Name: "test", Image: "golang:1.26"},
			).Obj(),
			want: hubTask().Steps(
				v1beta1.Step{Name: "build", Image: "golang:1.26", Script: "go build ./..."},
				v1beta1.Step{Name: "test", Image: "golang:1.26"},
			).Obj(),
		},
		"no spec": {
			spoke: spokeTask().Steps().Obj(),
			want:  hubTask().Steps().Obj(),
		},
		"stashed fields are restored and the annotation removed": {
			spoke: spokeTask().Annotation(stashed(`{"spec":{"description":"Says hi","params":[` +
				`{"name":"greeting","default":"hello"},{"name":"suffix","default":""},{"name":"target"}]}}`)).Obj(),
			want: hubTask().Description("Says hi").Params(
				v1beta1.ParamSpec{Name: "greeting", Default: ptr.To("hello")},
				v1beta1.ParamSpec{Name: "suffix", Default: ptr.To("")},
				v1beta1.ParamSpec{Name: "target"},
			).Obj(),
		},
		"a release-2 stash reads unchanged": {
			spoke: spokeTask().Annotation(stashed(`{"spec":{"description":"Says hi","params":[{"name":"greeting","default":"hello"}]}}`)).Obj(),
			want:  hubTask().Description("Says hi").Params(v1beta1.ParamSpec{Name: "greeting", Default: ptr.To("hello")}).Obj(),
		},
		"workspaces are restored, readOnly false apart from absent": {
			spoke: spokeTask().Annotation(stashed(`{"spec":{"workspaces":[{"name":"source","readOnly":false},{"name":"cache"}]}}`)).Obj(),
			want:  hubTask().Workspaces(v1beta1.WorkspaceDeclaration{Name: "source", ReadOnly: ptr.To(false)}, v1beta1.WorkspaceDeclaration{Name: "cache"}).Obj(),
		},
		"the spoke's steps win over stashed ones": {
			spoke: spokeTask().Annotation(stashed(`{"spec":{"steps":[{"name":"old","image":"old"}]}}`)).Obj(),
			want:  hubTask().Obj(),
		},
		"removing the only annotation leaves none": {
			spoke: spokeTask().Annotations(nil).Annotation(stashed(`{"spec":{"description":"d"}}`)).Obj(),
			want:  hubTask().Annotations(nil).Description("d").Obj(),
		},
		"an unparsable annotation is ignored and removed": {
			spoke: spokeTask().Annotation(AnnotationConversionData, `{"v1beta1":`).Obj(),
			want:  hubTask().Obj(),
		},
		"an annotation of the wrong shape is ignored whole": {
			spoke: spokeTask().Annotation(stashed(`{"spec":{"description":"d","params":"greeting"}}`)).Obj(),
			want:  hubTask().Obj(),
		},
		"an empty annotation is removed": {
			spoke: spokeTask().Annotation(AnnotationConversionData, "").Obj(),
			want:  hubTask().Obj(),
		},
		"data for another hub version is ignored": {
			spoke: spokeTask().Annotation(AnnotationConversionData, `{"v1":{"spec":{"description":"d"}}}`).Obj(),
			want:  hubTask().Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskToBeta, tc.spoke, tc.want)
		})
	}
}
