// Package manifests renders what `kubectl apply -f dist/install.yaml`
// installs, config/default or a variant of it as kubectl's kustomize renders
// it, and reads the repository's YAML manifests, for the tests that check
// what ships.
package manifests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// Manifest is a set of rendered objects, in their order.
type Manifest []*unstructured.Unstructured

// RenderYAML runs kubectl kustomize on a directory under config/, e.g.
// "default", and returns the YAML it prints.
func RenderYAML(t testing.TB, dir string) []byte {
	t.Helper()
	root, assets := paths(t)
	cmd := exec.Command(filepath.Join(assets, "kubectl"), "kustomize", filepath.Join(root, "config", dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/%s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

// Render is the objects that kubectl kustomize renders from a directory
// under config/, e.g. "default".
func Render(t testing.TB, dir string) Manifest {
	t.Helper()
	return Decode(t, RenderYAML(t, dir))
}

// Read reads a YAML file of the repository, path relative to its top.
func Read(t testing.TB, path string) Manifest {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return Decode(t, b)
}

// Decode reads the objects of a YAML stream, skipping empty documents.
func Decode(t testing.TB, b []byte) Manifest {
	t.Helper()
	var objs Manifest
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

// All returns the objects of kind.
func (m Manifest) All(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// Names are the names of the objects of kind.
func (m Manifest) Names(kind string) []string {
	var names []string
	for _, o := range m.All(kind) {
		names = append(names, o.GetName())
	}
	return names
}

// One converts the only object of kind into into, failing the test unless
// there is exactly one.
func (m Manifest) One(t testing.TB, kind string, into any) {
	t.Helper()
	objs := m.All(kind)
	if len(objs) != 1 {
		t.Fatalf("want one %s, found %d", kind, len(objs))
	}
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, into); err != nil {
		t.Fatalf("converting %s: %v", kind, err)
	}
}

// paths are the repository's top directory and the toolchain's.
func paths(t testing.TB) (root, assets string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	assets, err = testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	return root, assets
}
