package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/internal/apicompat"
)

const (
	testdata       = "../../test/e2e/testdata/"
	release4       = testdata + "release-4-crds.yaml"
	exceptionsFile = "../../hack/api-compat-exceptions.yaml"
	taskRunsCRD    = "taskruns.minitask.dev"
)

// frozen are the releases up to release 4, oldest first: the cases build on
// frozen files, so that they hold whatever the API becomes.
var frozen = []string{testdata + "first-release-crds.yaml", testdata + "release-2-crds.yaml", release4}

// TestStorageVersionTrain runs the gate as make verify-api does on release
// 4's CRDs moved to store v1, the move that Crossplane #6148 made in one
// release: refused after release 4, which did not serve v1, naming the kind
// and the version; let through after a release that served it.
func TestStorageVersionTrain(t *testing.T) {
	dir := t.TempDir()
	storesV1 := writeCRDs(t, filepath.Join(dir, "stores-v1.yaml"), "", func(crd *apiextensionsv1.CustomResourceDefinition) {
		addV1(crd, true)
	})
	release5 := writeCRDs(t, filepath.Join(dir, "release-5-crds.yaml"), "v0.5.0", func(crd *apiextensionsv1.CustomResourceDefinition) {
		addV1(crd, false)
	})
	// The reviewed exceptions of the frozen releases these cases build on;
	// those of release 5 are about the real release 5's CRDs, which the
	// cases replace with their own, and would be stale here.
	exceptions := exceptionsUpTo(t, filepath.Join(dir, "exceptions.yaml"), "release-4")
	cases := map[string]struct {
		crds       string
		releases   []string
		wantErr    string
		wantStderr string
	}{
		"release 4's CRDs": {crds: release4, releases: frozen},
		"v1 stored, new in this release": {crds: storesV1, releases: frozen,
			wantErr: "1 breaking API changes, 0 stale exceptions",
			wantStderr: "taskruns.minitask.dev v1: StorageVersionNotServedBefore: TaskRun: storage version v1 was not " +
				"served by release-4-crds.yaml (the release before); a version must be served for one release before it " +
				"is stored, or a rollback by one release cannot read what this release writes (breaks release release-4)\n"},
		"v1 stored a release after it was served": {crds: storesV1, releases: append(slices.Clone(frozen), release5)},
		"releases newest first": {crds: release4, releases: []string{frozen[2], frozen[1]},
			wantErr: "the frozen releases must be listed oldest first: release-2 (v0.2.0) comes after release-4 (v0.4.0)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := gate{crds: tc.crds, releases: tc.releases, exceptions: exceptions}.run(&stdout, &stderr)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if err == nil && !strings.HasPrefix(stdout.String(), "verify-api: ") {
				t.Errorf("stdout %q, want the line that says what passed", stdout.String())
			}
		})
	}
}

// exceptionsUpTo writes to path the entries of the reviewed exceptions file
// of the releases up to last (compared as text: first-release, release-2 to
// release-9 sort as they were cut), and returns path.
func exceptionsUpTo(t *testing.T, path, last string) string {
	t.Helper()
	data, err := os.ReadFile(exceptionsFile)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := yaml.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	entries = slices.DeleteFunc(entries, func(e map[string]any) bool {
		release, _ := e["release"].(string)
		return release > last
	})
	out, err := yaml.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeCRDs writes release 4's CRDs to path, the TaskRun's edited by edit,
// as one YAML stream: those of a release of version, or, if version is
// empty, of none.
func writeCRDs(t *testing.T, path, version string, edit func(*apiextensionsv1.CustomResourceDefinition)) string {
	t.Helper()
	set, err := apicompat.LoadCRDs(release4)
	if err != nil {
		t.Fatal(err)
	}
	edit(set[taskRunsCRD])
	var docs []string
	for _, crd := range set {
		delete(crd.Annotations, apicompat.ReleaseAnnotation)
		if version != "" {
			crd.Annotations[apicompat.ReleaseAnnotation] = version
		}
		b, err := yaml.Marshal(crd)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// addV1 adds v1 to crd as a copy of v1beta1, stored instead of it if storage.
func addV1(crd *apiextensionsv1.CustomResourceDefinition, storage bool) {
	var beta *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == "v1beta1" {
			beta = &crd.Spec.Versions[i]
		}
	}
	v1 := beta.DeepCopy()
	v1.Name, v1.Served, v1.Storage, v1.Deprecated, v1.DeprecationWarning = "v1", true, storage, false, nil
	beta.Storage = beta.Storage && !storage
	crd.Spec.Versions = append(crd.Spec.Versions, *v1)
}

// TestWebhookPathsAndKeptFields runs the gate on release 4's CRDs with the
// checks that flags turn on: this tree's webhook paths against a frozen
// release's served paths (-served-paths), and fields release 4 lacks
// (-require-kept).
func TestWebhookPathsAndKeptFields(t *testing.T) {
	dir := t.TempDir()
	exceptions := exceptionsUpTo(t, filepath.Join(dir, "exceptions.yaml"), "release-4")
	configured, err := apicompat.LoadWebhookPaths(webhooks...)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range configured {
		all = append(all, w.Path)
	}
	servesAll := writeFile(t, filepath.Join(dir, "all", "release-4"+apicompat.ServedPathsSuffix),
		"# every path this tree names\n"+strings.Join(all, "\n")+"\n")
	servesV1beta1 := writeFile(t, filepath.Join(dir, "v1beta1", "release-4"+apicompat.ServedPathsSuffix),
		"/convert\n/validate-minitask-dev-v1beta1-task\n/validate-minitask-dev-v1beta1-taskrun\n"+
			"/validate-minitask-dev-task-stash\n/validate-minitask-dev-taskrun-stash\n/validate-minitask-dev-taskrun-condition-times\n")
	servesRelease2 := writeFile(t, filepath.Join(dir, "release-2"+apicompat.ServedPathsSuffix), "/convert\n")
	addsField := writeCRDs(t, filepath.Join(dir, "adds-field.yaml"), "", func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Name == "v1beta1" {
				spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
				spec.Properties["sidecars"] = apiextensionsv1.JSONSchemaProps{Type: "array",
					Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}
				crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			}
		}
	})
	notServed := func(caller, path string) string {
		return caller + " " + path + ": WebhookPathNotServed: ../../config/webhook/manifests.yaml names it, and release-4-webhook-paths.txt " +
			"does not list it: a rolling update from release-4 would send it to replicas that answer 404; serve it in release-4 first " +
			"(breaks release release-4)\n"
	}
	cases := map[string]struct {
		g          gate
		wantErr    string
		wantStderr string
		wantStdout string
	}{
		"neither checked": {g: gate{crds: release4},
			wantStdout: "verify-api: fields release-4 lacks are not checked (-require-kept is off until the newest frozen release keeps every field)\n" +
				"verify-api: webhook paths are not checked: no frozen release lists its served paths yet (-served-paths)\n" +
				"verify-api: ../../test/e2e/testdata/release-4-crds.yaml compatible with first-release, release-2, release-4\n"},
		"every path served": {g: gate{crds: release4, webhooks: webhooks, servedPaths: servesAll, requireKept: true},
			wantStdout: "verify-api: ../../test/e2e/testdata/release-4-crds.yaml compatible with first-release, release-2, release-4\n"},
		"paths renamed since the release": {g: gate{crds: release4, webhooks: webhooks, servedPaths: servesV1beta1, requireKept: true},
			wantErr: "2 breaking API changes, 0 stale exceptions",
			wantStderr: notServed("vtask-v1.minitask.dev", "/validate-minitask-dev-v1-task") +
				notServed("vtaskrun-serviceaccount.minitask.dev", "/validate-minitask-dev-v1-taskrun")},
		"served paths of a release not the newest": {g: gate{crds: release4, webhooks: webhooks, servedPaths: servesRelease2},
			wantErr: "-served-paths " + servesRelease2 + " is release-2's, not the newest frozen release's (release-4): a rolling update starts from the newest"},
		"served paths without the files that name paths": {g: gate{crds: release4, servedPaths: servesAll, requireKept: true},
			wantErr: "-served-paths needs -webhooks, the files that name the paths to check"},
		"a field the release lacks": {g: gate{crds: addsField, webhooks: webhooks, servedPaths: servesAll, requireKept: true},
			wantErr: "1 breaking API changes, 0 stale exceptions",
			wantStderr: "taskruns.minitask.dev v1beta1 .spec.sidecars: FieldNotKept: a field that release-4-crds.yaml (the newest " +
				"frozen release) lacks: a rollback to it would prune it; add it to that release first, keeping it and refusing it " +
				"at admission (breaks release release-4)\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.g.releases, tc.g.exceptions = frozen, exceptions
			var stdout, stderr bytes.Buffer
			err := tc.g.run(&stdout, &stderr)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if tc.wantStdout != "" {
				if diff := cmp.Diff(tc.wantStdout, stdout.String()); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// webhooks are the files that name this tree's webhook paths, as the
// Makefile passes them.
var webhooks = []string{"../../config/webhook/manifests.yaml", "../../config/crd/patches"}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
