package storagemigration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStaleEntries(t *testing.T) {
	entry := func(manager, apiVersion, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, APIVersion: apiVersion, Subresource: subresource,
			Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1"}
	}
	alphaApply := entry("kubectl", "minitask.dev/v1alpha1", "")
	alphaApply.Operation = metav1.ManagedFieldsOperationApply
	alphaStatus := entry("legacy-client", "minitask.dev/v1alpha1", "status")
	beta := entry("manager", "minitask.dev/v1beta1", "status")
	other := entry("other", "example.com/v1alpha1", "")
	future := entry("future", "minitask.dev/v1", "")
	malformed := entry("odd", "minitask.dev/v1alpha1/x", "")

	tests := map[string]struct {
		versions  []apiextensionsv1.CustomResourceDefinitionVersion
		entries   []metav1.ManagedFieldsEntry
		wantStale map[string]int
		wantKept  []metav1.ManagedFieldsEntry
	}{
		"both served: nothing is stale": {
			versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha1", Served: true}, {Name: "v1beta1", Served: true, Storage: true}},
			entries:  []metav1.ManagedFieldsEntry{alphaApply, beta},
			wantKept: []metav1.ManagedFieldsEntry{alphaApply, beta},
		},
		"v1alpha1 unserved: its entries go, main resource and status alike": {
			versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha1", Served: false}, {Name: "v1beta1", Served: true, Storage: true}},
			entries:   []metav1.ManagedFieldsEntry{alphaApply, beta, alphaStatus, other},
			wantStale: map[string]int{"v1alpha1": 2},
			wantKept:  []metav1.ManagedFieldsEntry{beta, other},
		},
		"v1alpha1 removed, and a version the CRD never had": {
			versions:  []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true}},
			entries:   []metav1.ManagedFieldsEntry{alphaApply, future, beta},
			wantStale: map[string]int{"v1alpha1": 1, "v1": 1},
			wantKept:  []metav1.ManagedFieldsEntry{beta},
		},
		"every entry stale": {
			versions:  []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true}},
			entries:   []metav1.ManagedFieldsEntry{alphaApply, alphaStatus},
			wantStale: map[string]int{"v1alpha1": 2},
		},
		"the storage version is never stale, even unserved": {
			versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha1", Served: true}, {Name: "v1beta1", Served: false, Storage: true}},
			entries:  []metav1.ManagedFieldsEntry{beta},
			wantKept: []metav1.ManagedFieldsEntry{beta},
		},
		"an apiVersion that does not parse is kept": {
			versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true}},
			entries:  []metav1.ManagedFieldsEntry{malformed},
			wantKept: []metav1.ManagedFieldsEntry{malformed},
		},
		"no entries": {
			versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "minitask.dev", Versions: tc.versions}}
			stale, kept := staleEntries(tc.entries, crd.Spec.Group, servedVersions(crd))
			if diff := cmp.Diff(tc.wantStale, stale); diff != "" {
				t.Errorf("stale entries by version (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("kept entries (-want +got):\n%s", diff)
			}
		})
	}
}
