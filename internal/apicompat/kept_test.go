package apicompat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCheckKept compares a small CRD, as the newest release shipped it,
// with the same CRD as this release edits it.
func TestCheckKept(t *testing.T) {
	cases := map[string]struct {
		editRelease func(*apiextensionsv1.JSONSchemaProps)
		editCurrent func(*apiextensionsv1.JSONSchemaProps)
		// withBeta gives both CRDs a v1beta1 too, a copy of v1.
		withBeta bool
		// versions edits the current CRD's versions, after editCurrent.
		versions func([]apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceDefinitionVersion
		want     []Problem
	}{
		"unchanged": {},
		"a field added": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "sidecars", arrayOf(object())) },
			want:        []Problem{{Version: "v1", Path: ".spec.sidecars"}},
		},
		"a field added inside a new field is reported once, at the new field": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) {
				setSpec(p, "stepTemplate", object("image", "script"))
			},
			want: []Problem{{Version: "v1", Path: ".spec.stepTemplate"}},
		},
		"a field added in a list's items": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) {
				steps := p.Properties["spec"].Properties["steps"]
				steps.Items.Schema.Properties["timeout"] = str()
				setSpec(p, "steps", steps)
			},
			want: []Problem{{Version: "v1", Path: ".spec.steps[*].timeout"}},
		},
		"a field added in a map's values": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) {
				env := p.Properties["spec"].Properties["env"]
				env.AdditionalProperties.Schema.Properties["valueFrom"] = object("key")
				setSpec(p, "env", env)
			},
			want: []Problem{{Version: "v1", Path: ".spec.env[*].valueFrom"}},
		},
		"additional properties allowed": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) {
				setSpec(p, "labels", apiextensionsv1.JSONSchemaProps{Type: "object",
					AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: ptr.To(str())}})
			},
			editRelease: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "labels", object("app")) },
			want:        []Problem{{Version: "v1", Path: ".spec.labels"}},
		},
		"the release keeps unknown fields there": {
			editRelease: func(p *apiextensionsv1.JSONSchemaProps) {
				spec := p.Properties["spec"]
				spec.XPreserveUnknownFields = ptr.To(true)
				p.Properties["spec"] = spec
			},
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "sidecars", arrayOf(object())) },
		},
		"a field removed is FieldRemoved's": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { delete(p.Properties["spec"].Properties, "description") },
		},
		"a type changed is TypeChanged's": {
			editRelease: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "timeout", str()) },
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "timeout", object("seconds")) },
		},
		"a field added to every served version": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "sidecars", arrayOf(object())) },
			withBeta:    true,
			want:        []Problem{{Version: "v1", Path: ".spec.sidecars"}, {Version: "v1beta1", Path: ".spec.sidecars"}},
		},
		"a version the release lacks is skipped": {
			versions: func(vs []apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceDefinitionVersion {
				v2 := *vs[0].DeepCopy()
				v2.Name, v2.Storage = "v2", false
				setSpec(v2.Schema.OpenAPIV3Schema, "sidecars", arrayOf(object()))
				return append(vs, v2)
			},
		},
		"a version this release does not serve is skipped": {
			editCurrent: func(p *apiextensionsv1.JSONSchemaProps) { setSpec(p, "sidecars", arrayOf(object())) },
			versions: func(vs []apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceDefinitionVersion {
				vs[0].Served = false
				return vs
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, cur := smallCRD(), smallCRD()
			for _, c := range []struct {
				crd  *apiextensionsv1.CustomResourceDefinition
				edit func(*apiextensionsv1.JSONSchemaProps)
			}{{old, tc.editRelease}, {cur, tc.editCurrent}} {
				if tc.withBeta {
					beta := *c.crd.Spec.Versions[0].DeepCopy()
					beta.Name, beta.Storage = "v1beta1", false
					c.crd.Spec.Versions = append(c.crd.Spec.Versions, beta)
				}
				for i := range c.crd.Spec.Versions {
					if c.edit != nil {
						c.edit(c.crd.Spec.Versions[i].Schema.OpenAPIV3Schema)
					}
				}
			}
			if tc.versions != nil {
				cur.Spec.Versions = tc.versions(cur.Spec.Versions)
			}
			release := Release{Name: "release-6", File: "release-6-crds.yaml", CRDs: CRDSet{tasks: old}}
			got, err := CheckKept(release, CRDSet{tasks: cur})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].Release, tc.want[i].CRD, tc.want[i].Kind = "release-6", tasks, FieldNotKept
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Problem{}, "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFieldNotKeptSaysWhatToDo: the message names the release and what to do.
func TestFieldNotKeptSaysWhatToDo(t *testing.T) {
	cur := smallCRD()
	setSpec(cur.Spec.Versions[0].Schema.OpenAPIV3Schema, "sidecars", arrayOf(object()))
	got, err := CheckKept(Release{Name: "release-6", File: "release-6-crds.yaml", CRDs: CRDSet{tasks: smallCRD()}}, CRDSet{tasks: cur})
	if err != nil {
		t.Fatal(err)
	}
	want := "tasks.minitask.dev v1 .spec.sidecars: FieldNotKept: a field that release-6-crds.yaml (the newest frozen release) " +
		"lacks: a rollback to it would prune it; add it to that release first, keeping it and refusing it at admission " +
		"(breaks release release-6)"
	if len(got) != 1 || got[0].String() != want {
		t.Errorf("got %v, want %q", got, want)
	}
}

// smallCRD is a Task CRD of one version, v1: spec.description, a list of
// steps (name, image) and a map of env values (value).
func smallCRD() *apiextensionsv1.CustomResourceDefinition {
	spec := object("description")
	spec.Properties["steps"] = arrayOf(object("name", "image"))
	spec.Properties["env"] = apiextensionsv1.JSONSchemaProps{Type: "object",
		AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: ptr.To(object("value"))}}
	root := object()
	root.Properties["spec"] = spec
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: tasks},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "minitask.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Task", ListKind: "TaskList", Plural: "tasks", Singular: "task"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &root}}},
		},
	}
}

// object is an object schema with the named string properties.
func object(strings ...string) apiextensionsv1.JSONSchemaProps {
	p := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, name := range strings {
		p.Properties[name] = str()
	}
	return p
}

func arrayOf(items apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
}

func str() apiextensionsv1.JSONSchemaProps { return apiextensionsv1.JSONSchemaProps{Type: "string"} }

// setSpec sets the property name of root's spec.
func setSpec(root *apiextensionsv1.JSONSchemaProps, name string, p apiextensionsv1.JSONSchemaProps) {
	spec := root.Properties["spec"]
	spec.Properties[name] = p
	root.Properties["spec"] = spec
}
