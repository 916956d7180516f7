package storedversions

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The watch of one CRD by name: the API server authorizes a LIST or WATCH
// whose field selector names one object as a request for that object, so
// resourceNames scopes it.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch,resourceNames=taskruns.minitask.dev

// Watcher keeps what the TaskRun CRD's storedVersions say current, from a
// watch of that one CRD, so that a webhook can ask at each request without
// a request of its own. It is a manager Runnable that runs on every replica
// (each serves webhooks), and until its first LIST has answered, or after
// the CRD is deleted, it knows nothing and says may-hold.
type Watcher struct {
	// Config reaches the API server.
	Config *rest.Config
	// HTTPClient, if set, carries the watch (the manager's).
	HTTPClient *http.Client
	// CRD is the CRD watched; TaskRuns when empty.
	CRD string

	// stored is the last storedVersions seen, nil while none is known.
	stored atomic.Pointer[[]string]
}

// NeedLeaderElection is false: every replica answers webhooks.
func (*Watcher) NeedLeaderElection() bool { return false }

// MayHoldUnreadableTimes says whether the CRD's objects may hold a time Go
// cannot read, by the rule of MayHoldUnreadableTimes, from the last
// storedVersions the watch saw; true while it has seen none. A nil Watcher
// knows nothing.
func (w *Watcher) MayHoldUnreadableTimes() bool {
	if w == nil {
		return true
	}
	stored := w.stored.Load()
	return stored == nil || MayHoldUnreadableTimes(*stored)
}

// Start watches the CRD until ctx is done. The informer lists and watches
// again on its own after an error; what it knew stays meanwhile, as no
// write can store a time Go cannot read (see the package documentation).
func (w *Watcher) Start(ctx context.Context) error {
	name := w.CRD
	if name == "" {
		name = TaskRuns
	}
	httpClient := w.HTTPClient
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(w.Config); err != nil {
			return fmt.Errorf("building the HTTP client for watching CRD %s: %w", name, err)
		}
	}
	clientset, err := apiextensionsclient.NewForConfigAndClient(w.Config, httpClient)
	if err != nil {
		return fmt.Errorf("building the client for watching CRD %s: %w", name, err)
	}
	logger := log.FromContext(ctx).WithName("storedversions").WithValues("crd", name)
	byName := func(options *metav1.ListOptions) {
		options.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	seen := func(obj any) {
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return
		}
		stored := append([]string(nil), crd.Status.StoredVersions...)
		if previous := w.stored.Swap(&stored); previous == nil || MayHoldUnreadableTimes(*previous) != MayHoldUnreadableTimes(stored) {
			logger.Info("storedVersions read", "storedVersions", stored,
				"mayHoldUnreadableTimes", MayHoldUnreadableTimes(stored))
		}
	}
	_, informer := toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: toolscache.NewFilteredListWatchFromClient(
			clientset.ApiextensionsV1().RESTClient(), "customresourcedefinitions", "", byName),
		ObjectType: &apiextensionsv1.CustomResourceDefinition{},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    seen,
			UpdateFunc: func(_, obj any) { seen(obj) },
			DeleteFunc: func(any) {
				w.stored.Store(nil)
				logger.Info("CRD deleted; its objects may hold times Go cannot read until it is seen again")
			},
		},
	})
	informer.RunWithContext(ctx)
	return nil
}
