package apicompat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

const (
	tasks    = "tasks.minitask.dev"
	taskRuns = "taskruns.minitask.dev"
)

// TestCheck edits today's CRDs the way a change to apis/ would, and checks
// that the gate fails on each breaking edit and passes each safe one. Each
// case edits either the release (what was shipped) or the current CRDs.
func TestCheck(t *testing.T) {
	cases := map[string]struct {
		editRelease func(CRDSet)
		editCurrent func(CRDSet)
		want        []Problem
	}{
		"unchanged": {},
		"optional field added": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Properties["futureField"] = apiextensionsv1.JSONSchemaProps{Type: "array",
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}
				})
			},
		},
		"limit added in a list of listType=map (ratcheted)": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec.steps.*.script", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxLength = ptr.To[int64](65536) })
			},
		},
		"limit loosened": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec.steps", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxItems = ptr.To[int64](100) })
			},
		},
		"field removed": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) { delete(p.Properties, "description") })
			},
			want: []Problem{{CRD: tasks, Version: "v1beta1", Path: ".spec.description", Kind: FieldRemoved}},
		},
		"field removed from the deprecated version": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1alpha1", "status", func(p *apiextensionsv1.JSONSchemaProps) { delete(p.Properties, "finishTime") })
			},
			want: []Problem{{CRD: taskRuns, Version: "v1alpha1", Path: ".status.finishTime", Kind: FieldRemoved}},
		},
		"type changed": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "spec.timeout", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Type, p.Pattern, p.XValidations = "integer", "", nil
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".spec.timeout", Kind: TypeChanged}},
		},
		"enum value removed": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "spec.status", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"Stopped"`)}}
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".spec.status", Kind: EnumValueRemoved}},
		},
		"enum value added": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "spec.status", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"Paused"`)})
				})
			},
		},
		"new required field": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) { p.Required = append(p.Required, "params") })
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".spec.params", Kind: RequiredAdded}},
		},
		"limit tightened inside an atomic list": {
			editRelease: func(s CRDSet) { atomicSteps(s) },
			editCurrent: func(s CRDSet) {
				atomicSteps(s)
				edit(s, tasks, "v1beta1", "spec.steps.*.image", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxLength = ptr.To[int64](255) })
			},
			want: []Problem{{CRD: tasks, Version: "v1beta1", Path: ".spec.steps[*].image", Kind: LimitTightened}},
		},
		"list type changed": {
			editCurrent: func(s CRDSet) { atomicSteps(s) },
			want:        []Problem{{CRD: tasks, Version: "v1beta1", Path: ".spec.steps", Kind: ListSemantics}},
		},
		"transition rule added": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "immutable"})
				})
			},
			want: []Problem{{CRD: tasks, Version: "v1beta1", Path: ".spec", Kind: TransitionRuleAdded}},
		},
		"CEL rule added where it ratchets": {
			editCurrent: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec.steps.*", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{Rule: "!has(self.script) || size(self.script) > 0"})
				})
			},
		},
		// Ratcheting spares a value a rule judges false, not one it fails
		// to evaluate on: CEL reads a date-time as a timestamp, which fails
		// on 2024-05-01t10:00:00z, a time the date-time format admits.
		"CEL rule added that reads a date-time value": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "status.conditions", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{
						Rule: "self.all(c, c.lastTransitionTime >= timestamp('0001-01-01T00:00:00Z'))"})
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".status.conditions", Kind: RuleMayFailToEvaluate}},
		},
		"CEL rule added that reads a date-time value optionally": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "status", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{Rule: "self.?startTime.hasValue() || true"})
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".status", Kind: RuleMayFailToEvaluate}},
		},
		"CEL rule added on a date-time value": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "status.startTime", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{Rule: "self >= timestamp('2000-01-01T00:00:00Z')"})
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".status.startTime", Kind: RuleMayFailToEvaluate}},
		},
		"CEL rule added that parses a field's text": {
			editCurrent: func(s CRDSet) {
				edit(s, taskRuns, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) {
					p.XValidations = append(p.XValidations, apiextensionsv1.ValidationRule{
						Rule: "!has(self.timeout) || duration(self.timeout) <= duration('24h')"})
				})
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Path: ".spec", Kind: RuleMayFailToEvaluate}},
		},
		"unknown fields pruned": {
			editRelease: func(s CRDSet) {
				edit(s, tasks, "v1beta1", "spec", func(p *apiextensionsv1.JSONSchemaProps) { p.XPreserveUnknownFields = ptr.To(true) })
			},
			want: []Problem{{CRD: tasks, Version: "v1beta1", Path: ".spec", Kind: PruningChanged}},
		},
		"short name removed": {
			editCurrent: func(s CRDSet) { s[tasks].Spec.Names.ShortNames = nil },
			want:        []Problem{{CRD: tasks, Kind: NamesChanged}},
		},
		"deprecated version unserved": {
			editCurrent: func(s CRDSet) { version(s[tasks], "v1alpha1").Served = false },
		},
		"version unserved without deprecation": {
			editRelease: func(s CRDSet) { version(s[tasks], "v1alpha1").Deprecated = false },
			editCurrent: func(s CRDSet) { version(s[tasks], "v1alpha1").Served = false },
			want:        []Problem{{CRD: tasks, Version: "v1alpha1", Kind: VersionUnserved}},
		},
		"served version removed": {
			editCurrent: func(s CRDSet) { removeVersion(s[tasks], "v1alpha1") },
			want:        []Problem{{CRD: tasks, Version: "v1alpha1", Kind: VersionRemoved}},
		},
		"unserved version removed": {
			editRelease: func(s CRDSet) { version(s[tasks], "v1alpha1").Served = false },
			editCurrent: func(s CRDSet) { removeVersion(s[tasks], "v1alpha1") },
		},
		"storage version changed, old one kept": {
			editRelease: func(s CRDSet) { setStorage(s[taskRuns], "v1alpha1") },
		},
		"storage version changed, old one removed": {
			editRelease: func(s CRDSet) {
				setStorage(s[taskRuns], "v1alpha1")
				version(s[taskRuns], "v1alpha1").Served = false
			},
			editCurrent: func(s CRDSet) { removeVersion(s[taskRuns], "v1alpha1") },
			want:        []Problem{{CRD: taskRuns, Version: "v1alpha1", Kind: StorageChanged}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			release, current := todaysCRDs(t), todaysCRDs(t)
			if tc.editRelease != nil {
				tc.editRelease(release)
			}
			if tc.editCurrent != nil {
				tc.editCurrent(current)
			}
			got, err := Check([]Release{{Name: "release-x", Version: "v0.9.0", CRDs: release}}, current)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].Release = "release-x"
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Problem{}, "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFrozenReleases is what make verify-api checks, as a test: today's CRDs
// break no frozen release. The releases are the Makefile's FROZEN_RELEASES,
// in its order, so that a release frozen there is checked here too, and
// fields the newest one lacks are refused as REQUIRE_KEPT_FIELDS says.
func TestFrozenReleases(t *testing.T) {
	current := todaysCRDs(t)
	var releases []Release
	for _, path := range frozenReleases(t) {
		r, err := LoadRelease(path)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	problems, err := Check(releases, current)
	if err != nil {
		t.Fatal(err)
	}
	exceptions, err := LoadExceptions("../../hack/api-compat-exceptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if makeVariable(t, "REQUIRE_KEPT_FIELDS") == "true" {
		kept, err := CheckKept(releases[len(releases)-1], current)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, kept...)
	} else {
		exceptions = slices.DeleteFunc(exceptions, func(e Exception) bool { return e.Kind == FieldNotKept })
	}
	problems, unused := Apply(problems, exceptions)
	if len(problems) > 0 || len(unused) > 0 {
		t.Errorf("breaking changes: %v; stale exceptions: %v", problems, unused)
	}
}

func TestApplyExceptions(t *testing.T) {
	p := Problem{Release: "release-2", CRD: tasks, Version: "v1beta1", Path: ".spec", Kind: TransitionRuleAdded}
	accept := Exception{Release: "release-2", CRD: tasks, Version: "v1beta1", Path: ".spec", Kind: TransitionRuleAdded, Reason: "r"}
	other := Exception{Release: "release-2", CRD: tasks, Version: "v1beta1", Path: ".spec.steps", Kind: TransitionRuleAdded, Reason: "r"}
	remaining, unused := Apply([]Problem{p}, []Exception{accept, other})
	if diff := cmp.Diff([]Exception{other}, unused); len(remaining) != 0 || diff != "" {
		t.Errorf("remaining %v, unused diff (-want +got):\n%s", remaining, diff)
	}
}

// frozenReleases returns the files of the Makefile's FROZEN_RELEASES,
// relative to this package.
func frozenReleases(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, path := range strings.Split(makeVariable(t, "FROZEN_RELEASES"), ",") {
		paths = append(paths, filepath.Join("../..", path))
	}
	return paths
}

// makeVariable returns the value the Makefile sets name to (name := value).
func makeVariable(t *testing.T, name string) string {
	t.Helper()
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(makefile), "\n") {
		if value, ok := strings.CutPrefix(line, name+" :="); ok {
			return strings.TrimSpace(value)
		}
	}
	t.Fatalf("the Makefile sets no %s", name)
	return ""
}

func todaysCRDs(t *testing.T) CRDSet {
	t.Helper()
	set, err := LoadCRDs("../../config/crd/bases")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// edit applies fn to the schema at path (dot-separated; "*" steps into a
// list's items) in one version of a CRD. Properties are held by value, so
// each level is written back after fn has run.
func edit(s CRDSet, crd, v, path string, fn func(*apiextensionsv1.JSONSchemaProps)) {
	editAt(version(s[crd], v).Schema.OpenAPIV3Schema, strings.Split(path, "."), fn)
}

func editAt(p *apiextensionsv1.JSONSchemaProps, path []string, fn func(*apiextensionsv1.JSONSchemaProps)) {
	switch {
	case len(path) == 0 || path[0] == "":
		fn(p)
	case path[0] == "*":
		editAt(p.Items.Schema, path[1:], fn)
	default:
		child := p.Properties[path[0]]
		editAt(&child, path[1:], fn)
		p.Properties[path[0]] = child
	}
}

// atomicSteps makes the v1beta1 Task's steps an atomic list.
func atomicSteps(s CRDSet) {
	edit(s, tasks, "v1beta1", "spec.steps", func(p *apiextensionsv1.JSONSchemaProps) {
		p.XListType, p.XListMapKeys = nil, nil
	})
}

// setStorage makes the named version crd's storage version, and no other.
func setStorage(crd *apiextensionsv1.CustomResourceDefinition, name string) {
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == name
	}
}

func removeVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) {
	crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == name
	})
}
