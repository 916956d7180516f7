package manifests_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/manifests"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// testInstalledManager runs the manager binary with the installed
// Deployment's arguments (but for local addresses and leader election) as the installed service
// account, and checks that with only the installed RBAC it fills the empty
// certificate Secret, injects the CA bundle and becomes ready; that its
// webhook and metrics servers refuse TLS 1.1 and HTTP/2; that its metrics
// need a token; and that it stops cleanly on SIGTERM. The API server cannot
// reach it (there are no nodes, so no Service endpoints): conversion
// through the Service is the e2e suite's to check.
func testInstalledManager(t *testing.T, c *cluster, m manifests.Manifest) {
	var d appsv1.Deployment
	m.One(t, "Deployment", &d)
	mgr := startManager(t, c, &d)

	bundle := checkInjected(t, c, m)
	host := "minitask-webhook-service." + d.Namespace + ".svc"
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	conn, err := tls.Dial("tcp", mgr.webhookAddr, &tls.Config{RootCAs: roots, ServerName: host, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("the webhook server's certificate for %s does not verify against the injected CA bundle: %v", host, err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p == "h2" {
		t.Error("the webhook server negotiated HTTP/2, which is off by default")
	}
	_ = conn.Close()
	checkServiceAccountUseCheck(t, mgr.webhookAddr, host, roots)
	// Ready means the webhooks serve; the secure metrics server starts once
	// its authentication filter is built, a moment later.
	waitForLog(t, mgr.logs, "Serving metrics server", "the metrics server to start")
	for name, addr := range map[string]string{"webhook": mgr.webhookAddr, "metrics": mgr.metricsAddr} {
		//nolint:gosec // the point: a client that offers only TLS 1.1
		if conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}); err == nil {
			_ = conn.Close()
			t.Errorf("the %s server accepted a TLS 1.1 client", name)
		}
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // checks authn only
	if resp, err := insecure.Get("https://" + mgr.metricsAddr + "/metrics"); err != nil {
		t.Errorf("GET /metrics: %v", err)
	} else if _ = resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics without a token: %s, want 401 or 403", resp.Status)
	}

	// The controller's workers start once its informers have synced: by
	// then every list and watch it makes has been authorized, or not.
	waitForLog(t, mgr.logs, "Starting workers", "the controller's workers to start")
	if err := mgr.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-mgr.exited:
		if err != nil {
			t.Errorf("the manager stopped with %v on SIGTERM, want exit 0", err)
		}
	case <-time.After(40 * time.Second):
		t.Error("the manager did not stop within 40s of SIGTERM")
	}
	for _, line := range strings.Split(mgr.logs.String(), "\n") {
		if strings.Contains(line, "forbidden") {
			t.Errorf("the installed RBAC forbids the manager something: %s", line)
		}
	}
}

// runningManager is a manager process that has become ready, and the
// addresses it serves on.
type runningManager struct {
	cmd                      *exec.Cmd
	logs                     *syncBuffer
	exited                   chan error // receives cmd.Wait's result
	webhookAddr, metricsAddr string
}

// startManager starts the manager binary with the installed Deployment's
// arguments (but for local addresses and leader election) as the installed
// service account, and returns once it is ready. A manager that exits
// because another process took one of its ports between testenv.FreeAddr
// and its bind is started again on new ones, a few times.
func startManager(t *testing.T, c *cluster, d *appsv1.Deployment) *runningManager {
	t.Helper()
	bin, kubeconfig := buildManager(t), c.kubeconfigAs(t, "system:serviceaccount:"+d.Namespace+":"+d.Spec.Template.Spec.ServiceAccountName)
	const attempts = 3
	for attempt := 1; ; attempt++ {
		mgr, err := startManagerOnce(t, bin, kubeconfig, d)
		if err == nil {
			return mgr
		}
		if attempt == attempts || !strings.Contains(mgr.logs.String(), "address already in use") {
			t.Fatalf("the manager exited before it was ready (attempt %d of %d): %v", attempt, attempts, err)
		}
		t.Logf("the manager found a port taken (attempt %d of %d); starting it again on new ports", attempt, attempts)
	}
}

// startManagerOnce starts the manager on new local ports and returns once
// it is ready, or the error it exited with before it was. It fails the
// test if the manager is neither ready nor gone after 90s.
func startManagerOnce(t *testing.T, bin, kubeconfig string, d *appsv1.Deployment) (*runningManager, error) {
	t.Helper()
	webhookAddr, probeAddr, metricsAddr := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	args := []string{"--kubeconfig=" + kubeconfig, "--webhook-host=127.0.0.1", "--webhook-port=" + webhookPort}
	for _, a := range manager(t, d).Args {
		switch {
		case a == "--leader-elect":
			// Out of a Pod, leader election finds no namespace for its Lease.
			// Without it the manager runs the leader's work at once, so the
			// RBAC is exercised all the same.
			continue
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probeAddr
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metricsAddr
		}
		args = append(args, a)
	}
	mgr := &runningManager{
		cmd:         exec.Command(bin, args...),
		logs:        &syncBuffer{},
		exited:      make(chan error, 1),
		webhookAddr: webhookAddr,
		metricsAddr: metricsAddr,
	}
	mgr.cmd.Env = append(os.Environ(), "POD_NAMESPACE="+d.Namespace)
	mgr.cmd.Stdout, mgr.cmd.Stderr = mgr.logs, mgr.logs
	if err := mgr.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { mgr.exited <- mgr.cmd.Wait() }()
	t.Cleanup(func() {
		_ = mgr.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("manager logs:\n%s", mgr.logs.String())
		}
	})

	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get("http://" + probeAddr + "/readyz?verbose")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return mgr, nil
			}
		}
		select {
		case err := <-mgr.exited:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return mgr, err
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the manager was not ready after 90s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkInjected returns the CA bundle in the certificate Secret, checking
// that both CRDs and the webhook configuration hold it.
func checkInjected(t *testing.T, c *cluster, m manifests.Manifest) []byte {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	secret := m.All("Secret")[0]
	s := &corev1.Secret{}
	if err := cl.Get(t.Context(), client.ObjectKey{Namespace: secret.GetNamespace(), Name: secret.GetName()}, s); err != nil {
		t.Fatal(err)
	}
	bundle := s.Data["ca-bundle.crt"]
	if len(bundle) == 0 || len(s.Data["tls.crt"]) == 0 {
		t.Fatalf("the certificate Secret holds %d keys, no CA bundle or certificate", len(s.Data))
	}
	for _, name := range m.Names("CustomResourceDefinition") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(crd.Spec.Conversion.Webhook.ClientConfig.CABundle, bundle) {
			t.Errorf("CRD %s's conversion caBundle is not the Secret's CA bundle", name)
		}
	}
	for _, name := range m.Names("ValidatingWebhookConfiguration") {
		vwc := &admissionv1.ValidatingWebhookConfiguration{}
		if err := cl.Get(t.Context(), client.ObjectKey{Name: name}, vwc); err != nil {
			t.Fatal(err)
		}
		for _, w := range vwc.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
				t.Errorf("webhook %s's caBundle is not the Secret's CA bundle", w.Name)
			}
		}
	}
	return bundle
}

// buildManager builds the manager binary, as the Dockerfile does.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a bytes.Buffer that a process may write while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitForLog waits until the manager has logged text, and fails the test if
// it has not within 30s.
func waitForLog(t *testing.T, logs *syncBuffer, text, what string) {
	t.Helper()
	testenv.Eventually(t, func() (bool, string) {
		return strings.Contains(logs.String(), text), "no " + text + " in the log"
	}, what)
}
