//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// renderRelease renders the install of the release in tree for cluster c, as
// hack/local-cluster.sh renders the current one: the CRDs (kustomize
// config/crd) and the webhook configuration (config/webhook/manifests.yaml),
// with each clientConfig's in-cluster service replaced by the manager's
// local address with the same path, and the cluster's CA. It checks that
// the CRDs' versions are those frozenCRDs holds, and returns the file's path.
func renderRelease(t testing.TB, c *cluster, tree, frozenCRDs string) string {
	t.Helper()
	crds, err := exec.Command(c.kubectl, "kustomize", filepath.Join(tree, "config/crd")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/crd of %s: %v", tree, err)
	}
	webhooks, err := os.ReadFile(filepath.Join(tree, "config/webhook/manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(c.env["MINITASK_WEBHOOK_CERT_DIR"], "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	base := "https://127.0.0.1:" + c.env["MINITASK_WEBHOOK_PORT"]

	var out []string
	rendered := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, doc := range yamlDocuments(t, append(append(crds, "\n---\n"...), webhooks...)) {
		switch doc["kind"] {
		case "CustomResourceDefinition":
			conversion, _ := field(doc, "spec", "conversion").(map[string]any)
			if webhook, ok := conversion["webhook"].(map[string]any); ok {
				pointAtManager(t, webhook, base, ca)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			fromMap(t, doc, &crd)
			rendered[crd.Name] = crd
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			hooks, _ := doc["webhooks"].([]any)
			for _, h := range hooks {
				pointAtManager(t, h.(map[string]any), base, ca)
			}
		}
		b, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}

	// The frozen CRDs are what make verify-api and the docs call the release:
	// the rehearsal proves something about them only if they are what it
	// installs.
	frozen, err := os.ReadFile(frozenCRDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range yamlDocuments(t, frozen) {
		var want apiextensionsv1.CustomResourceDefinition
		fromMap(t, doc, &want)
		if diff := cmp.Diff(want.Spec.Versions, rendered[want.Name].Spec.Versions); diff != "" {
			t.Fatalf("%s in %s differs from the release's own (-frozen +release):\n%s", want.Name, frozenCRDs, diff)
		}
	}

	path := filepath.Join(t.TempDir(), "release-install.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pointAtManager replaces the service of hook's clientConfig with the
// manager's local address, keeping the path, and sets the CA bundle.
func pointAtManager(t testing.TB, hook map[string]any, base string, ca []byte) {
	t.Helper()
	cc, ok := hook["clientConfig"].(map[string]any)
	if !ok {
		t.Fatalf("a webhook without a clientConfig: %v", hook)
	}
	service, ok := cc["service"].(map[string]any)
	if !ok {
		t.Fatalf("a webhook clientConfig without a service: %v", cc)
	}
	path, _ := service["path"].(string)
	delete(cc, "service")
	cc["url"] = base + path
	cc["caBundle"] = base64.StdEncoding.EncodeToString(ca)
}

// yamlDocuments splits a multi-document YAML stream into its documents,
// skipping empty ones.
func yamlDocuments(t testing.TB, b []byte) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
}

// field returns the value at path in obj, nil if there is none.
func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// fromMap converts a decoded document into a typed object.
func fromMap(t testing.TB, doc map[string]any, into any) {
	t.Helper()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("decoding %v %v: %v", doc["kind"], field(doc, "metadata", "name"), err)
	}
}
