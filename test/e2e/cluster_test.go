//go:build e2e

// Package e2e tests minitask end to end: the manager as a process, against a
// local kwok cluster made by hack/local-cluster.sh, as a user runs them. Each
// test makes its own cluster and deletes it when it ends, failed or not. Run
// them with `make test-e2e`, which builds bin/manager and the toolchain first.
package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/internal/scheme"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// ns is where the tests put their objects: each test has a cluster of its own.
const ns = "default"

func TestMain(m *testing.M) {
	// The client logs nothing the tests need; the manager logs to its own file.
	logf.SetLogger(logr.Discard())
	code := m.Run()
	removeReleaseTrees()
	os.Exit(code)
}

// cluster is a local cluster that one test created with hack/local-cluster.sh.
type cluster struct {
	// name is its MINITASK_CLUSTER.
	name string
	// repo is the repository's top directory.
	repo string
	// env holds the settings `hack/local-cluster.sh env` prints: KUBECONFIG,
	// MINITASK_MANIFESTS, MINITASK_WEBHOOK_PORT and so on.
	env map[string]string
	// config reaches the API server as an admin.
	config *rest.Config
	// client reaches the API server as an admin, with v1alpha1, v1beta1,
	// apiextensions/v1 and the built-ins in its scheme.
	client client.Client
	// kubectl is the toolchain's kubectl, which matches the API server.
	kubectl string
}

// clusterOption changes how newCluster creates a cluster.
type clusterOption func(args []string) []string

// withoutMinitask creates the cluster without our CRDs and webhook
// configuration, for a test that installs others first.
func withoutMinitask(args []string) []string { return append(args, "--no-install") }

// creating serialises cluster creation (newCluster).
var creating sync.Mutex

// newCluster creates a cluster named e2e-NAME and deletes it when the test
// ends. The name is fixed, not random, so that it never touches a developer's
// `make run` cluster (named minitask), and so that a run killed before its
// cleanup leaves nothing for long: the next run's create replaces it.
// MINITASK_E2E_PREFIX replaces e2e-, for a second run of the same tests on
// one machine.
func newCluster(t testing.TB, name string, opts ...clusterOption) *cluster {
	t.Helper()
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{name: cmp.Or(os.Getenv("MINITASK_E2E_PREFIX"), "e2e-") + name, repo: repo}
	start := time.Now()
	// Registered first, so it runs last: after the manager has stopped.
	t.Cleanup(func() {
		if out, err := c.script("delete"); err != nil {
			t.Errorf("deleting cluster %s: %v\n%s", c.name, err, out)
		}
	})
	args := []string{"create"}
	for _, opt := range opts {
		args = opt(args)
	}
	// One cluster is created at a time, even by tests that run in
	// parallel: kwokctl picks its components' ports as it starts them, and
	// two at once can pick the same one.
	creating.Lock()
	out, err := c.script(args...)
	creating.Unlock()
	if err != nil {
		t.Fatalf("creating cluster %s: %v\n%s", c.name, err, out)
	}
	out, err = c.script("env")
	if err != nil {
		t.Fatalf("reading the settings of cluster %s: %v\n%s", c.name, err, out)
	}
	c.env = parseEnv(out)

	cfg, err := clientcmd.BuildConfigFromFlags("", c.env["KUBECONFIG"])
	if err != nil {
		t.Fatalf("loading the kubeconfig of cluster %s: %v", c.name, err)
	}
	// Hundreds of objects are created at once; v1alpha1's deprecation
	// warnings are expected.
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	c.config = cfg
	if c.client, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		t.Fatalf("creating a client for cluster %s: %v", c.name, err)
	}
	bin, err := exec.Command(filepath.Join(c.repo, "hack/install-tools.sh"), "--print", "bin").Output()
	if err != nil {
		t.Fatalf("finding the toolchain: %v", err)
	}
	c.kubectl = filepath.Join(strings.TrimSpace(string(bin)), "kubectl")
	t.Logf("cluster %s is ready (%.1fs)", c.name, time.Since(start).Seconds())
	return c
}

// script runs hack/local-cluster.sh with args on this cluster and returns
// what it printed, standard error included. Ports are picked here, not from
// 9443 and 8081 up as the script does, so that a developer's cluster that is
// not running its manager right now cannot be given the same ports.
func (c *cluster) script(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.repo, "hack/local-cluster.sh"), args...)
	cmd.Dir = c.repo
	cmd.Env = append(os.Environ(), "MINITASK_CLUSTER="+c.name)
	if args[0] == "create" {
		cmd.Env = append(cmd.Env,
			fmt.Sprintf("MINITASK_WEBHOOK_PORT=%d", freePort()),
			fmt.Sprintf("MINITASK_PROBE_PORT=%d", freePort()))
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runKubectl runs the toolchain's kubectl against the cluster.
func (c *cluster) runKubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.env["KUBECONFIG"])
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// parseEnv reads KEY=value lines.
func parseEnv(s string) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

// freePort returns a TCP port that nothing listens on right now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("finding a free port: %v", err))
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
