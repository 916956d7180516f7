package manifests_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/minitask-dev/minitask/internal/testing/manifests"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// cluster is an empty API server (envtest: kube-apiserver and etcd, no
// nodes, nothing installed) and kubectl for it.
type cluster struct {
	kubeconfig string
	kubectlBin string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting the test API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the test API server: %v", err)
		}
	})
	user, err := env.AddUser(envtest.User{Name: "installer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"), kubectlBin: filepath.Join(dir, "kubectl")}
	if err := os.WriteFile(c.kubeconfig, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// kubectl runs kubectl and returns what it printed on stdout and stderr
// (where warnings go), failing the test if it fails.
func (c *cluster) kubectl(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(c.kubectlBin, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// kubeconfigAs writes a kubeconfig that impersonates user.
func (c *cluster) kubeconfigAs(t *testing.T, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig-as")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInstall applies the rendered config/default to an empty API server:
// first as a server-side dry run (what the e2e suite checks of
// dist/install.yaml), then for real, then as a dry run again, as an upgrade
// to the same version would; the API server validates every object and
// runs its admission, Pod Security included. Then it runs the manager as
// the Deployment would, as the installed service account.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver and etcd")
	}
	c := startCluster(t)
	install := manifests.RenderYAML(t, "default")
	file := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(file, install, 0o600); err != nil {
		t.Fatal(err)
	}
	m := manifests.Decode(t, install)

	t.Run("server-side apply", func(t *testing.T) {
		// A dry run creates nothing, so the objects in the namespace it would
		// create need the namespace to exist already.
		c.kubectl(t, "create", "namespace", m.Names("Namespace")[0])
		for _, dryRun := range []string{"--dry-run=server", "--dry-run=none", "--dry-run=server"} {
			out, warnings := c.kubectl(t, "apply", "--server-side", "--field-manager=minitask-installer", dryRun, "-f", file)
			t.Logf("kubectl apply --server-side %s:\n%s", dryRun, out)
			if strings.Contains(warnings, "PodSecurity") {
				t.Errorf("the API server warns about Pod Security:\n%s", warnings)
			}
		}
		c.kubectl(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/tasks.minitask.dev", "crd/taskruns.minitask.dev")
	})
	if t.Failed() {
		return
	}
	t.Run("the manager starts with the installed RBAC", func(t *testing.T) { testInstalledManager(t, c, m) })
}
