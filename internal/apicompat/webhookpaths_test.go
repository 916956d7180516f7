package apicompat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// webhookConfiguration is a webhook configuration in the form
// controller-gen writes, naming two paths.
const webhookConfiguration = `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vtask.minitask.dev
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-task}
- name: vtaskrun.minitask.dev
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-taskrun}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mtask.minitask.dev
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-task}
`

// conversionPatch is a CRD patch as in config/crd/patches.
const conversionPatch = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tasks.minitask.dev
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {namespace: system, name: webhook-service, path: /convert}
      conversionReviewVersions: [v1]
`

func TestLoadWebhookPaths(t *testing.T) {
	cases := map[string]struct {
		files map[string]string
		// load are the files and directories to load; unset, the one file.
		load    []string
		want    []WebhookPath
		wantErr string
	}{
		"configurations and a conversion patch": {
			files: map[string]string{"manifests.yaml": webhookConfiguration, "patches/webhook_in_tasks.yaml": conversionPatch},
			load:  []string{"manifests.yaml", "patches"},
			want: []WebhookPath{
				{Path: "/validate-task", Caller: "vtask.minitask.dev", File: "manifests.yaml"},
				{Path: "/validate-taskrun", Caller: "vtaskrun.minitask.dev", File: "manifests.yaml"},
				{Path: "/mutate-task", Caller: "mtask.minitask.dev", File: "manifests.yaml"},
				{Path: "/convert", Caller: "tasks.minitask.dev", File: "patches/webhook_in_tasks.yaml"},
			},
		},
		"a CRD without webhook conversion names nothing": {
			files: map[string]string{"crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" +
				"metadata: {name: tasks.minitask.dev}\nspec: {conversion: {strategy: None}}\n"},
		},
		"other kinds are skipped": {
			files: map[string]string{"service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: webhook-service}\n"},
		},
		"a webhook without a path is served at /": {
			files: map[string]string{"manifests.yaml": strings.ReplaceAll(webhookConfiguration, ", path: /mutate-task", "")},
			want: []WebhookPath{
				{Path: "/validate-task", Caller: "vtask.minitask.dev", File: "manifests.yaml"},
				{Path: "/validate-taskrun", Caller: "vtaskrun.minitask.dev", File: "manifests.yaml"},
				{Path: "/", Caller: "mtask.minitask.dev", File: "manifests.yaml"},
			},
		},
		"a URL is refused": {
			files: map[string]string{"manifests.yaml": strings.ReplaceAll(webhookConfiguration,
				"service: {name: webhook-service, namespace: system, path: /mutate-task}", "url: https://example.com/mutate")},
			wantErr: "mtask.minitask.dev calls https://example.com/mutate, not a Service",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var load []string
			for file, content := range tc.files {
				path := filepath.Join(dir, file)
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				load = append(load, path)
			}
			if tc.load != nil {
				load = nil
				for _, path := range tc.load {
					load = append(load, filepath.Join(dir, path))
				}
			}
			got, err := LoadWebhookPaths(load...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one that says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].File, _ = filepath.Rel(dir, got[i].File)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadServedPaths(t *testing.T) {
	cases := map[string]struct {
		content string
		want    []string
		wantErr string
	}{
		"paths, comments and blank lines": {
			content: "# release 6\n\n/convert\n  /validate-task  \n# kept\n/validate-old\n",
			want:    []string{"/convert", "/validate-task", "/validate-old"},
		},
		"not a path":    {content: "convert\n", wantErr: `:1: "convert" is not a URL path`},
		"two on a line": {content: "/convert /validate-task\n", wantErr: "is not a URL path"},
		"no path":       {content: "# nothing yet\n", wantErr: "lists no path"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "release-6"+ServedPathsSuffix)
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadServedPaths(file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one that says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := ServedPaths{Release: "release-6", File: "release-6" + ServedPathsSuffix, Paths: tc.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("served paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckWebhookPaths(t *testing.T) {
	served := ServedPaths{Release: "release-6", File: "release-6-webhook-paths.txt",
		Paths: []string{"/convert", "/validate-v1-task", "/validate-v1beta1-task"}}
	cases := map[string]struct {
		configured []WebhookPath
		want       []Problem
	}{
		"every path served": {configured: []WebhookPath{
			{Path: "/convert", Caller: "tasks.minitask.dev"}, {Path: "/validate-v1-task", Caller: "vtask.minitask.dev"},
		}},
		"a path renamed in this release": {
			configured: []WebhookPath{{Path: "/convert", Caller: "tasks.minitask.dev"}, {Path: "/validate-v2-task", Caller: "vtask.minitask.dev"}},
			want:       []Problem{{Release: "release-6", CRD: "vtask.minitask.dev", Path: "/validate-v2-task", Kind: WebhookPathNotServed}},
		},
		"a new webhook": {
			configured: []WebhookPath{{Path: "/validate-v1-taskrun", Caller: "vtaskrun.minitask.dev"}},
			want:       []Problem{{Release: "release-6", CRD: "vtaskrun.minitask.dev", Path: "/validate-v1-taskrun", Kind: WebhookPathNotServed}},
		},
		"the conversion path moved, for each CRD": {
			configured: []WebhookPath{{Path: "/convert-v2", Caller: "tasks.minitask.dev"}, {Path: "/convert-v2", Caller: "taskruns.minitask.dev"}},
			want: []Problem{
				{Release: "release-6", CRD: "taskruns.minitask.dev", Path: "/convert-v2", Kind: WebhookPathNotServed},
				{Release: "release-6", CRD: "tasks.minitask.dev", Path: "/convert-v2", Kind: WebhookPathNotServed},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckWebhookPaths(served, tc.configured)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Problem{}, "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebhookPathNotServedSaysWhatToDo: the message names the release, the
// file that names the path, and what to do.
func TestWebhookPathNotServedSaysWhatToDo(t *testing.T) {
	served := ServedPaths{Release: "release-6", File: "release-6-webhook-paths.txt", Paths: []string{"/convert"}}
	got := CheckWebhookPaths(served, []WebhookPath{{Path: "/validate-v2-task", Caller: "vtask.minitask.dev", File: "config/webhook/manifests.yaml"}})
	want := "vtask.minitask.dev /validate-v2-task: WebhookPathNotServed: config/webhook/manifests.yaml names it, and " +
		"release-6-webhook-paths.txt does not list it: a rolling update from release-6 would send it to replicas that answer 404; " +
		"serve it in release-6 first (breaks release release-6)"
	if len(got) != 1 || got[0].String() != want {
		t.Errorf("got %v, want %q", got, want)
	}
}
