package conversion

import (
	"regexp"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/matchcond"
)

// boundChecks is how many random objects of each kind the bound is checked
// against.
const boundChecks = 3000

// sizeBound is the part of a stash guard's match condition that bounds the
// v1alpha1 annotations' size: what stands between the version and
// annotation (and, for runs, subresource) tests and "> 262144".
var sizeBound = regexp.MustCompile(`^request\.requestKind\.version != 'v1beta1' \|\| (?:!has\(request\.subResource\) && )?` +
	`has\(object\.metadata\.annotations\) && 'minitask\.dev/conversion-data' in object\.metadata\.annotations \|\| ` +
	`(?:!has\(request\.subResource\) && )?(.*) > 262144$`)

// TestStashGuardMatchConditionBoundsTheStash evaluates the stash guard's
// installed match conditions (config/webhook/manifests.yaml) as the API
// server does, with its CEL environment as of the oldest Kubernetes the
// install supports and its cost budget, on random v1beta1 objects that
// carry every field the stash may: the size they bound is never less than
// what conversion writes (SpokeAnnotationsSize). An estimate below it would
// let a write that cannot be read through v1alpha1 skip the webhook.
func TestStashGuardMatchConditionBoundsTheStash(t *testing.T) {
	bounds := stashGuardBounds(t)
	g := newObjectGenerator(roundTripSeed + 20)
	escaping := newObjectGenerator(roundTripSeed + 21)
	escaping.escapingText = true
	for kind, random := range map[string]func() runtime.Object{
		"Task":                   func() runtime.Object { return g.hubTask() },
		"TaskRun":                func() runtime.Object { return g.hubTaskRun() },
		"Task, escaping text":    func() runtime.Object { return escaping.hubTask() },
		"TaskRun, escaping text": func() runtime.Object { return escaping.hubTaskRun() },
	} {
		kind, _, _ := strings.Cut(kind, ",")
		bound, ok := bounds[kind]
		if !ok {
			t.Fatalf("%s has no stash guard with a size bound in %s", kind, matchcond.Manifests)
		}
		for i := range boundChecks {
			hub := random()
			size, err := SpokeAnnotationsSize(hub)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hub)
			if err != nil {
				t.Fatal(err)
			}
			dropNulls(obj)
			obj["apiVersion"], obj["kind"] = v1beta1.GroupVersion.String(), kind
			// The size to beat rides in the object, so that one compiled
			// expression serves every object.
			obj["stashBytesForTest"] = int64(size)
			result := bound.Match(t.Context(), versioned(kind, &unstructured.Unstructured{Object: obj}), nil, nil)
			if result.Error != nil {
				t.Fatalf("%s %d: evaluating the bound: %v", kind, i, result.Error)
			}
			if !result.Matches {
				t.Fatalf("%s %d: the match condition bounds its annotations below the %d bytes conversion writes:\n%s",
					kind, i, size, mustJSON(t, hub))
			}
		}
	}
}

// stashGuardBounds compiles, for each kind the stash guards judge, the
// expression "BOUND >= object.stashBytesForTest" from its match condition,
// and checks that the whole condition compiles too.
func stashGuardBounds(t *testing.T) map[string]matchconditions.Matcher {
	t.Helper()
	fail := admissionregistrationv1.Fail
	compile := func(name, expression string) matchconditions.Matcher {
		t.Helper()
		return matchcond.Compile(t, &fail, admissionregistrationv1.MatchCondition{Name: name, Expression: expression})
	}
	kinds := map[string]string{"tasks": "Task", "taskruns": "TaskRun"}
	bounds := map[string]matchconditions.Matcher{}
	for _, webhook := range matchcond.Webhooks(t) {
		if len(webhook.Rules) == 0 || len(webhook.Rules[0].Resources) == 0 {
			continue
		}
		kind := kinds[webhook.Rules[0].Resources[0]]
		for _, condition := range webhook.MatchConditions {
			m := sizeBound.FindStringSubmatch(condition.Expression)
			if kind == "" || m == nil {
				continue
			}
			compile(condition.Name, condition.Expression)
			bounds[kind] = compile(condition.Name, "("+m[1]+") >= object.stashBytesForTest")
		}
	}
	return bounds
}

// dropNulls removes the null members of obj's objects, as the API server
// drops the nulls of fields its CRD does not declare nullable before any
// validation or admission sees them.
func dropNulls(obj map[string]any) {
	for k, v := range obj {
		switch v := v.(type) {
		case nil:
			delete(obj, k)
		case map[string]any:
			dropNulls(v)
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					dropNulls(m)
				}
			}
		}
	}
}

// versioned is a create of obj as the API server hands it to admission.
func versioned(kind string, obj *unstructured.Unstructured) *admission.VersionedAttributes {
	gvk := v1beta1.GroupVersion.WithKind(kind)
	attributes := admission.NewAttributesRecord(obj, nil, gvk, "ns", "name",
		schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: map[string]string{"Task": "tasks", "TaskRun": "taskruns"}[kind]},
		"", admission.Create, nil, false, &user.DefaultInfo{Name: "test"})
	return &admission.VersionedAttributes{Attributes: attributes, VersionedObject: admission.NewLazyObject(obj), VersionedKind: gvk}
}
