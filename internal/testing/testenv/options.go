package testenv

import (
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Option changes the API server or etcd that Start starts, for the few tests
// that need them closer to a real cluster's than envtest's defaults. Each such
// test starts an Env of its own (ForTest), so that the package's shared one
// stays as every other test expects it.
type Option func(*envtest.Environment)

// WithServiceAccountAdmission turns the ServiceAccount admission plugin back
// on; envtest turns it off, since no controller-manager creates the default
// ServiceAccount of each namespace. With it on, a Pod is refused until its
// ServiceAccount exists, as in a brand-new namespace of a real cluster: the
// test creates the ServiceAccount itself.
func WithServiceAccountAdmission() Option {
	return func(e *envtest.Environment) {
		e.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	}
}

// WithEtcdMaxRequestBytes sets etcd's --max-request-bytes (1.5 MiB by
// default), the largest object it stores: the API server refuses a bigger
// write with 413 Request Entity Too Large.
func WithEtcdMaxRequestBytes(n int) Option {
	return func(e *envtest.Environment) {
		if e.ControlPlane.Etcd == nil {
			e.ControlPlane.Etcd = &envtest.Etcd{}
		}
		e.ControlPlane.Etcd.Configure().Set("max-request-bytes", strconv.Itoa(n))
	}
}

// WithAPIServerFeatureGates sets the API server's --feature-gates, gates
// as the flag takes them ("PodLevelResources=false", say): a cluster whose
// API server lacks a feature on by default.
func WithAPIServerFeatureGates(gates string) Option {
	return func(e *envtest.Environment) {
		e.ControlPlane.GetAPIServer().Configure().Set("feature-gates", gates)
	}
}
