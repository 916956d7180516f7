package cli

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestNoClusterError checks when the plugin gives up for want of a cluster:
// only when neither the kubeconfig, --server nor the Pod it runs in names
// one. The in-cluster config itself cannot be tested end to end: client-go
// reads the ServiceAccount token from a fixed path under /var/run/secrets.
func TestNoClusterError(t *testing.T) {
	withCluster := clientcmdapi.Config{Clusters: map[string]*clientcmdapi.Cluster{"c": {Server: "https://example.test"}}}
	inPod := func() (*rest.Config, error) { return &rest.Config{Host: "https://10.0.0.1:443"}, nil }
	notInPod := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }
	noToken := func() (*rest.Config, error) {
		return nil, errors.New("open /var/run/secrets/kubernetes.io/serviceaccount/token: no such file or directory")
	}
	tests := map[string]struct {
		raw       clientcmdapi.Config
		server    string
		inCluster func() (*rest.Config, error)
		want      string
	}{
		"a cluster in the kubeconfig": {raw: withCluster, inCluster: notInPod},
		"--server":                    {server: "https://example.test", inCluster: notInPod},
		"in a Pod with its ServiceAccount token": {
			// The plugin refused this; client-go and kubectl use the token.
			inCluster: inPod,
		},
		"neither, outside a Pod": {inCluster: notInPod, want: errNoKubeconfig.Error()},
		"neither, in a Pod without its token": {
			inCluster: noToken,
			want: "no cluster configured: no kubeconfig found, and the in-cluster config is not usable " +
				"(open /var/run/secrets/kubernetes.io/serviceaccount/token: no such file or directory); " +
				"give --kubeconfig or set KUBECONFIG, or mount the Pod's ServiceAccount token",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := noClusterError(tc.raw, tc.server, tc.inCluster); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("noClusterError (-want +got):\n%s", diff)
			}
		})
	}
}
