package stagetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/yaml"
)

// TestAcceptStartsSidecarsAndTheFirstStep: pod-accept starts a Pod's
// native sidecars, started and ready, and its first step: the first init
// container that is no sidecar, else (a chained Pod) every container.
func TestAcceptStartsSidecarsAndTheFirstStep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "stages", "pod-accept.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stage struct {
		Spec struct {
			Steps []struct {
				Patch struct {
					Template string `json:"template"`
				} `json:"patch"`
			} `json:"steps"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &stage); err != nil {
		t.Fatal(err)
	}
	sidecar := map[string]any{"name": "sidecar-db", "image": "postgres", "restartPolicy": "Always"}
	container := func(name string) map[string]any { return map[string]any{"name": name, "image": "alpine"} }
	tests := map[string]struct {
		spec      map[string]any
		wantPhase string
		// want is each container's state, by name: started and ready.
		want map[string]string
	}{
		"init containers": {
			spec:      map[string]any{"initContainers": []any{sidecar, container("step-a"), container("step-b")}, "containers": []any{container("step-c")}},
			wantPhase: "Pending",
			want:      map[string]string{"sidecar-db": "running true true", "step-a": "running true false", "step-b": "waiting false false", "step-c": "waiting false false"},
		},
		"chained": {
			spec:      map[string]any{"initContainers": []any{sidecar}, "containers": []any{container("step-a"), container("step-b")}},
			wantPhase: "Running",
			want:      map[string]string{"sidecar-db": "running true true", "step-a": "running true true", "step-b": "running true true"},
		},
		"no sidecars": {
			spec:      map[string]any{"initContainers": []any{container("step-a")}, "containers": []any{container("step-b")}},
			wantPhase: "Pending",
			want:      map[string]string{"step-a": "running true false", "step-b": "waiting false false"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.spec["nodeName"] = "node-1"
			pod := map[string]any{"metadata": map[string]any{"name": "p", "namespace": "default", "uid": "u"}, "spec": tc.spec}
			out, err := gotpl.NewRenderer(gotpl.FuncMap{
				"NodeIPWith": func(string) string { return "10.0.0.1" },
				"PodIPWith":  func(string, bool, string, string, string) string { return "10.0.0.2" },
			}).ToJSON(stage.Spec.Steps[0].Patch.Template, pod)
			if err != nil {
				t.Fatalf("rendering pod-accept: %v", err)
			}
			var status struct {
				Phase    string `json:"phase"`
				Statuses []struct {
					Name    string         `json:"name"`
					Started bool           `json:"started"`
					Ready   bool           `json:"ready"`
					State   map[string]any `json:"state"`
				} `json:"initContainerStatuses"`
				Containers []struct {
					Name    string         `json:"name"`
					Started bool           `json:"started"`
					Ready   bool           `json:"ready"`
					State   map[string]any `json:"state"`
				} `json:"containerStatuses"`
			}
			if err := json.Unmarshal(out, &status); err != nil {
				t.Fatalf("reading %s: %v", out, err)
			}
			got := map[string]string{}
			for _, cs := range append(status.Statuses, status.Containers...) {
				for state := range cs.State {
					got[cs.Name] = state + " " + boolText(cs.Started) + " " + boolText(cs.Ready)
				}
			}
			if status.Phase != tc.wantPhase {
				t.Errorf("phase = %q, want %q", status.Phase, tc.wantPhase)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("containers (-want +got):\n%s\nthe patch: %s", diff, out)
			}
		})
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
