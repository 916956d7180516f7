package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// RestartAPIServer stops kube-apiserver and starts it again against the same
// etcd, on the same address, with the same serving certificate and client
// CA, so that Config, Client and the clients made from Config keep working;
// it returns once the API server reports itself ready (/readyz). What etcd
// holds survives (objects, CRDs, webhook configurations, so conversion still
// calls this Env's webhook server); what the API server held in memory does
// not: its watch caches start cold, and a CRD's are built only at the first
// request for one of its resources.
func (e *Env) RestartAPIServer(t testing.TB) {
	t.Helper()
	api := e.env.ControlPlane.GetAPIServer()
	// Stop deletes a certificate directory that envtest made, and Start would
	// then sign a new serving certificate with a new CA, which Config does not
	// trust: restart from a copy the Env owns (Stop removes it with tmpDir).
	certDir := filepath.Join(e.tmpDir, "kube-apiserver")
	if api.CertDir != certDir {
		if err := os.CopyFS(certDir, os.DirFS(api.CertDir)); err != nil {
			t.Fatalf("keeping the API server's certificates: %v", err)
		}
	}
	if err := api.Stop(); err != nil {
		t.Fatalf("stopping the API server: %v", err)
	}
	api.CertDir = certDir
	if err := api.Start(); err != nil {
		t.Fatalf("starting the API server again: %v", err)
	}
	httpClient, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, func() (bool, string) { return readyz(httpClient, e.Config.Host) }, "the restarted API server's /readyz")
}

// readyz reports whether the API server at host answers /readyz with 200,
// and otherwise what it answered.
func readyz(c *http.Client, host string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/readyz", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode == http.StatusOK, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body)
}
