package apicompat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadReleaseVersion reads a release's version from its CRDs'
// annotation, which every CRD of the file must give alike.
func TestLoadReleaseVersion(t *testing.T) {
	crd := func(name, release string) string {
		annotations := ""
		if release != "" {
			annotations = "\n  annotations:\n    minitask.dev/release: " + release
		}
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:" + annotations + "\n  name: " + name + "\n"
	}
	cases := map[string]struct {
		docs        []string
		wantVersion string
		wantErr     string
	}{
		"one version":  {docs: []string{crd("a.minitask.dev", "v0.4.0"), crd("b.minitask.dev", "v0.4.0")}, wantVersion: "v0.4.0"},
		"none":         {docs: []string{crd("a.minitask.dev", "v0.4.0"), crd("b.minitask.dev", "")}, wantErr: `release-9-crds.yaml: CRD b.minitask.dev has minitask.dev/release "": every CRD of a frozen release needs the release's version there`},
		"two versions": {docs: []string{crd("a.minitask.dev", "v0.4.0"), crd("b.minitask.dev", "v0.5.0")}, wantErr: `release-9-crds.yaml: CRD b.minitask.dev has minitask.dev/release "v0.5.0": every CRD of a frozen release needs the release's version there`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "release-9-crds.yaml")
			if err := os.WriteFile(path, []byte(strings.Join(tc.docs, "---\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := LoadRelease(path)
			gotErr := ""
			if err != nil {
				gotErr = strings.TrimPrefix(err.Error(), filepath.Dir(path)+"/")
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantVersion, r.Version); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
		})
	}
}
