// Package manifests_test checks what `kubectl apply -f dist/install.yaml`
// installs: config/default and the config/certmanager variant as kubectl's
// kustomize renders them, and the generated RBAC role.
package manifests_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// manifest is a set of rendered objects.
type manifest []*unstructured.Unstructured

// render runs kubectl kustomize on a directory under config/.
func render(t *testing.T, dir string) manifest {
	t.Helper()
	cmd := exec.Command(filepath.Join(assets(t), "kubectl"), "kustomize", filepath.Join(repoRoot(t), "config", dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/%s: %v\n%s", dir, err, stderr.String())
	}
	return decode(t, out)
}

// readManifest reads a YAML file of the repository.
func readManifest(t *testing.T, path string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

func decode(t *testing.T, b []byte) manifest {
	t.Helper()
	var objs manifest
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// all returns the objects of kind.
func (m manifest) all(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// names are the names of the objects of kind.
func (m manifest) names(kind string) []string {
	var names []string
	for _, o := range m.all(kind) {
		names = append(names, o.GetName())
	}
	return names
}

// one converts the only object of kind into into, failing unless there is exactly one.
func (m manifest) one(t *testing.T, kind string, into any) {
	t.Helper()
	objs := m.all(kind)
	if len(objs) != 1 {
		t.Fatalf("want one %s, found %d", kind, len(objs))
	}
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, into); err != nil {
		t.Fatalf("converting %s: %v", kind, err)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// assets is where kube-apiserver, etcd and kubectl are: KUBEBUILDER_ASSETS
// (make test sets it), else the toolchain cache that hack/install-tools.sh fills.
func assets(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		out, err := exec.Command(filepath.Join(repoRoot(t), "hack", "install-tools.sh"), "--print", "assets").Output()
		if err != nil {
			t.Fatalf("locating the toolchain: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(dir, "kubectl")); err != nil {
		t.Fatalf("no kubectl in %s: run `make test` or hack/install-tools.sh first", dir)
	}
	return dir
}
