package testenv

import (
	"context"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetStoredVersions sets the status.storedVersions of the CRD named crd, as
// an upgrade, a rollback or a migration does, and returns what they were. A
// list already set is not written again.
func (e *Env) SetStoredVersions(t testing.TB, crd string, stored []string) (was []string) {
	t.Helper()
	obj := &apiextensionsv1.CustomResourceDefinition{}
	ctx := context.Background() // also from a Cleanup, when t.Context() is done
	if err := e.Client.Get(ctx, client.ObjectKey{Name: crd}, obj); err != nil {
		t.Fatal(err)
	}
	was = obj.Status.StoredVersions
	if slices.Equal(was, stored) {
		return was
	}
	obj.Status.StoredVersions = stored
	if err := e.Client.Status().Update(ctx, obj); err != nil {
		t.Fatalf("setting the storedVersions of %s to %q: %v", crd, stored, err)
	}
	return was
}
