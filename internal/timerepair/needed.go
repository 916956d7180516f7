package timerepair

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/storedversions"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=taskruns.minitask.dev

// needed reports whether a pass must be made: unless the TaskRun CRD, read
// now, has a storedVersions that no run with a time Go cannot read can be
// stored under (storedversions.MayHoldUnreadableTimes). A CRD that cannot
// be read leaves the question open, and the pass is made, as before this
// check: a skipped repair would leave the controller's cache unsynced,
// where a needless one costs a LIST.
func (r *Repairer) needed(ctx context.Context) bool {
	if r.Reader == nil {
		return true
	}
	logger := log.FromContext(ctx)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: storedversions.TaskRuns}, crd); err != nil {
		logger.Error(err, "Reading the TaskRun CRD's storedVersions failed; reading every stored TaskRun for times Go cannot read")
		return true
	}
	if storedversions.MayHoldUnreadableTimes(crd.Status.StoredVersions) {
		logger.Info("Reading every stored TaskRun for times Go cannot read", "storedVersions", crd.Status.StoredVersions)
		return true
	}
	logger.V(1).Info("No stored TaskRun can hold a time Go cannot read; nothing to read",
		"storedVersions", crd.Status.StoredVersions)
	return false
}
