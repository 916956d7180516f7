// Package scheme builds the runtime.Scheme that the manager, the tests and the
// tools share: the built-in Kubernetes types plus the three minitask API versions, and
// apiextensions/v1 for the CRDs.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// New returns a scheme with the Kubernetes built-ins, v1alpha1, v1beta1 and v1.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	utilruntime.Must(v1.AddToScheme(s))
	// The storage migration reads and updates our CRDs.
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}
