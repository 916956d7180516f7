package main

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
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
	cmd := exec.Command(os.Args[0], "--help")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	// --help prints the flags and exits 0.
	usage, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("manager --help: %v\n%s", err, usage)
	}
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
