package apis_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/minitask-dev/minitask/config/crd"
)

// TestInt32FieldsAreBounded checks that every int32 field of our own types,
// in every version of both CRDs, has a minimum and a maximum within int32.
// API servers before Kubernetes 1.36 do not enforce format: int32 on CRDs:
// without them they store 2147483648, and then every typed LIST of the kind
// fails to decode, the manager's cache with it. The int32 fields of core/v1
// types we embed take no marker of ours; they are listed, so that a new one
// is a decision. Those of a sidecar's ports and probes (release 7's) are
// bounded by CEL rules on the sidecar instead (apis/v1, Sidecar), which
// TestAPIServerRefusesInvalidRelease7Fields tries.
func TestInt32FieldsAreBounded(t *testing.T) {
	var sidecars []string
	for _, at := range []string{
		"tasks.minitask.dev v1 .spec.sidecars[*].",
		"taskruns.minitask.dev v1 .spec.taskSpec.sidecars[*].",
		"taskruns.minitask.dev v1 .status.taskSpec.sidecars[*].",
	} {
		for _, f := range []string{"ports[*].containerPort", "ports[*].hostPort"} {
			sidecars = append(sidecars, at+f)
		}
		for _, probe := range []string{"readinessProbe.", "startupProbe."} {
			for _, f := range []string{"failureThreshold", "grpc.port", "initialDelaySeconds", "periodSeconds", "successThreshold", "timeoutSeconds"} {
				sidecars = append(sidecars, at+probe+f)
			}
		}
	}
	embedded := []string{
		"taskruns.minitask.dev v1 .spec.podTemplate.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1 .spec.podTemplate.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1 .spec.podTemplate.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1 .spec.workspaces[*].configMap.defaultMode",
		"taskruns.minitask.dev v1 .spec.workspaces[*].configMap.items[*].mode",
		"taskruns.minitask.dev v1 .spec.workspaces[*].emptyDir.mode",
		"taskruns.minitask.dev v1 .spec.workspaces[*].secret.defaultMode",
		"taskruns.minitask.dev v1 .spec.workspaces[*].secret.items[*].mode",
		"taskruns.minitask.dev v1beta1 .spec.podTemplate.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1beta1 .spec.podTemplate.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1beta1 .spec.podTemplate.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight",
		"taskruns.minitask.dev v1beta1 .spec.workspaces[*].configMap.defaultMode",
		"taskruns.minitask.dev v1beta1 .spec.workspaces[*].configMap.items[*].mode",
		"taskruns.minitask.dev v1beta1 .spec.workspaces[*].emptyDir.mode",
		"taskruns.minitask.dev v1beta1 .spec.workspaces[*].secret.defaultMode",
		"taskruns.minitask.dev v1beta1 .spec.workspaces[*].secret.items[*].mode",
	}
	embedded = append(embedded, sidecars...)
	slices.Sort(embedded)
	wantBounded := []string{
		"taskruns.minitask.dev v1 .spec.retries",
		"taskruns.minitask.dev v1 .spec.ttlSecondsAfterFinished",
		"taskruns.minitask.dev v1 .status.sidecars[*].exitCode",
		"taskruns.minitask.dev v1 .status.sidecars[*].restartCount",
		"taskruns.minitask.dev v1 .status.steps[*].exitCode",
		"taskruns.minitask.dev v1beta1 .spec.retries",
		"taskruns.minitask.dev v1beta1 .spec.ttlSecondsAfterFinished",
		"taskruns.minitask.dev v1beta1 .status.steps[*].exitCode",
	}
	var bounded, unbounded []string
	for _, file := range []string{crd.TasksFile, crd.TaskRunsFile} {
		def := readCRD(t, file)
		for _, version := range def.Spec.Versions {
			walkSchema(version.Schema.OpenAPIV3Schema, "", func(path string, s *apiextensionsv1.JSONSchemaProps) {
				if s.Type != "integer" || s.Format != "int32" {
					return
				}
				where := def.Name + " " + version.Name + " " + path
				if s.Minimum != nil && *s.Minimum >= math.MinInt32 && s.Maximum != nil && *s.Maximum <= math.MaxInt32 {
					bounded = append(bounded, where)
				} else {
					unbounded = append(unbounded, where)
				}
			})
		}
	}
	slices.Sort(bounded)
	slices.Sort(unbounded)
	if diff := cmp.Diff(wantBounded, bounded); diff != "" {
		t.Errorf("int32 fields bounded within int32 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(embedded, unbounded); diff != "" {
		t.Errorf("int32 fields without bounds, which must be core/v1's (-want +got):\n%s", diff)
	}
}
