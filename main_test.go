package main

import (
	"bytes"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/minitask-dev/minitask/internal/certs"
)

// runMainEnv makes the test binary run main instead of the tests: the flags
// are then those the manager registers, the ones controller-runtime
// registers for it (--kubeconfig) included.
const runMainEnv = "MINITASK_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestKubebuilderFlags checks that the manager accepts every flag that
// kubebuilder v4's scaffold gives a manager, and the two that other tools
// drive it with (--webhook-port, --kubeconfig): deployment tooling written
// for those names (kustomize patches, cert-manager's) must not find the
// manager exiting on an unknown flag.
func TestKubebuilderFlags(t *testing.T) {
	usage := managerHelp(t)
	for _, name := range []string{
		"metrics-bind-address", "health-probe-bind-address", "leader-elect", "metrics-secure", "enable-http2",
		"webhook-cert-path", "webhook-cert-name", "webhook-cert-key",
		"metrics-cert-path", "metrics-cert-name", "metrics-cert-key",
		"zap-devel", "zap-log-level",
		"webhook-port", "kubeconfig",
	} {
		if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).Match(usage) {
			t.Errorf("manager --help does not list --%s", name)
		}
	}
}

// managerHelp returns what the manager's --help prints: its flags.
func managerHelp(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--help")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	// --help prints the flags and exits 0.
	usage, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("manager --help: %v\n%s", err, usage)
	}
	return usage
}

// TestServingCert checks what --webhook-cert-path and --metrics-cert-path
// do: the server's TLS options serve the certificate in the directory,
// named as --*-cert-name and --*-cert-key say, and each server gets options
// of its own; no directory leaves the options as they were.
func TestServingCert(t *testing.T) {
	dir := t.TempDir()
	files, err := certs.NewServingFiles([]string{"localhost"}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"serving.crt": files.Cert, "serving.key": files.Key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := certs.ServingTLSOptions(false)

	if w, err := watchCert("", "tls.crt", "tls.key"); w != nil || err != nil {
		t.Fatalf("watchCert with no directory = %v, %v; want nil, nil", w, err)
	}
	if got := servingCert(base, nil); len(got) != len(base) {
		t.Errorf("servingCert without a certificate has %d options, want the %d given", len(got), len(base))
	}

	w, err := watchCert(dir, "serving.crt", "serving.key")
	if err != nil {
		t.Fatalf("watchCert: %v", err)
	}
	opts := servingCert(base, w)
	if len(base) > 0 && &opts[0] == &base[0] {
		t.Error("servingCert's options share their array with the ones given, which the other server's share too")
	}
	config := &tls.Config{}
	for _, opt := range opts {
		opt(config)
	}
	if config.GetCertificate == nil {
		t.Fatal("the options serve no certificate")
	}
	served, err := config.GetCertificate(&tls.ClientHelloInfo{ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tls.X509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served.Certificate[0], want.Certificate[0]) {
		t.Error("the options serve another certificate than the directory's")
	}
}
