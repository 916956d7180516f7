//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// deployedMemoryLimit is the GOMEMLIMIT that config/manager/manager.yaml
// gives the manager's container, "" if none: the memory benchmark runs the
// manager with it, so that it measures the manager as it is deployed.
func deployedMemoryLimit(tb testing.TB, c *cluster) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(c.repo, "config", "manager", "manager.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		for _, container := range d.Spec.Template.Spec.Containers {
			for _, env := range container.Env {
				if container.Name == "manager" && env.Name == "GOMEMLIMIT" {
					return env.Value
				}
			}
		}
	}
	return ""
}
