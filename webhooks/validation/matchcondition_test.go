package validation

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/matchcond"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestTaskRunMatchCondition evaluates the TaskRun webhook's installed match
// condition (config/webhook/manifests.yaml) as the API server of the
// oldest supported Kubernetes does, on v1 creates: it must send every
// create that names a ServiceAccount and every create whose values
// ValidateCreate would refuse for their size, and spare the rest.
func TestTaskRunMatchCondition(t *testing.T) {
	webhooks := matchcond.Webhooks(t)
	i := slices.IndexFunc(webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
		return w.ClientConfig.Service != nil && w.ClientConfig.Service.Path != nil && *w.ClientConfig.Service.Path == TaskRunPath
	})
	if i < 0 {
		t.Fatalf("%s has no webhook at %s", matchcond.Manifests, TaskRunPath)
	}
	matcher := matchcond.Compile(t, webhooks[i].FailurePolicy, webhooks[i].MatchConditions...)

	long := strings.Repeat("x", MaxValueBytes+1)
	// Four bytes each, so past MaxValueBytes in MaxValueBytes/4+1 characters.
	wide := strings.Repeat("\U0001F600", MaxValueBytes/4+1)
	tests := map[string]struct {
		run       *v1.TaskRun
		wantMatch bool
	}{
		"nothing":             {run: wrappers.TaskRun("ns", "r", "t").Obj()},
		"a ServiceAccount":    {run: wrappers.TaskRun("ns", "r", "t").ServiceAccount("builder").Obj(), wantMatch: true},
		"short values":        {run: wrappers.TaskRun("ns", "r", "t").Params(typedParams("a", "b")...).Obj()},
		"values at the limit": {run: wrappers.TaskRun("ns", "r", "t").Params(typedParams(long[1:], "")...).Obj(), wantMatch: true},
		"a long string":       {run: wrappers.TaskRun("ns", "r", "t").Param("s", long).Obj(), wantMatch: true},
		"a long array item":   {run: wrappers.TaskRun("ns", "r", "t").Params(v1.Param{Name: "a", Value: *v1.NewArrayValue("x", long)}).Obj(), wantMatch: true},
		"a long object value": {run: wrappers.TaskRun("ns", "r", "t").Params(v1.Param{Name: "o",
			Value: *v1.NewObjectValue(map[string]string{"k": wide})}).Obj(), wantMatch: true},
		"an inline taskSpec": {run: wrappers.TaskRun("ns", "r", "").Inline(
			wrappers.Task("ns", "t").Step("a", "alpine", "echo $(params.nope)").Obj().Spec).Obj(), wantMatch: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result := matcher.Match(context.Background(), taskRunCreate(t, tc.run), nil, nil)
			if result.Error != nil {
				t.Fatalf("evaluating the match condition: %v", result.Error)
			}
			if result.Matches != tc.wantMatch {
				t.Errorf("the match condition sends the create to the webhook: %t, want %t", result.Matches, tc.wantMatch)
			}
			_, err := TaskRunValidator{}.ValidateCreate(context.Background(), tc.run)
			if err != nil && !result.Matches {
				t.Errorf("ValidateCreate refuses what the match condition spares it: %v", err)
			}
		})
	}
}

// typedParams are a string, an array and an object param, each holding s
// (the array and the object also other).
func typedParams(s, other string) []v1.Param {
	return []v1.Param{
		{Name: "s", Value: *v1.NewStringValue(s)},
		{Name: "a", Value: *v1.NewArrayValue(other, s)},
		{Name: "o", Value: *v1.NewObjectValue(map[string]string{"k": s, "l": other})},
	}
}

// taskRunCreate is the create of run as the API server hands it to admission.
func taskRunCreate(t *testing.T, run *v1.TaskRun) *admission.VersionedAttributes {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(taskRunJSON(t, run), &obj.Object); err != nil {
		t.Fatal(err)
	}
	gvk := v1.GroupVersion.WithKind("TaskRun")
	attributes := admission.NewAttributesRecord(obj, nil, gvk, run.Namespace, run.Name, v1.GroupVersion.WithResource("taskruns"),
		"", admission.Create, nil, false, &user.DefaultInfo{Name: "test"})
	return &admission.VersionedAttributes{Attributes: attributes, VersionedObject: admission.NewLazyObject(obj), VersionedKind: gvk}
}
