package timerepair

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// BenchmarkDecodePage decodes a LIST page of release 3 runs as the API
// server answers it (managed fields included) the way the repair read pages
// before, as an unstructured list (what controller-runtime's client does for
// unstructured objects), and the way it reads them now (decodePage into
// storedRun, computing each run's repairs). B/op is the allocation of one
// page; live-B/page is what the decoded page still holds once collected,
// while the caller keeps what it was given (the list; the repairs, none here).
func BenchmarkDecodePage(b *testing.B) {
	for _, runs := range []int{100, pageSize} {
		page := benchPage(b, runs)
		b.Run(fmt.Sprintf("unstructured/runs=%d", runs), func(b *testing.B) {
			decode := func() any {
				list := &unstructured.UnstructuredList{}
				if _, _, err := unstructured.UnstructuredJSONScheme.Decode(page, nil, list); err != nil {
					b.Fatal(err)
				}
				return list
			}
			runBenchmark(b, page, decode)
		})
		b.Run(fmt.Sprintf("storedRun/runs=%d", runs), func(b *testing.B) {
			decode := func() any {
				var repairs [][]patchOp
				if _, err := decodePage(bytes.NewReader(page), func(run *storedRun) error {
					if ops := repairOps(&run.Status); len(ops) > 0 {
						repairs = append(repairs, ops)
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				return repairs
			}
			runBenchmark(b, page, decode)
		})
	}
}

// runBenchmark times decode, then measures once what its result holds.
func runBenchmark(b *testing.B, page []byte, decode func() any) {
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		decode()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := decode()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "live-B/page")
}

// benchPage is a TaskRunList page of n finished release 3 runs, as JSON.
func benchPage(b *testing.B, n int) []byte {
	b.Helper()
	items := make([]json.RawMessage, n)
	for i := range items {
		run, err := json.Marshal(benchRun(b, i))
		if err != nil {
			b.Fatal(err)
		}
		items[i] = run
	}
	page, err := json.Marshal(map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "TaskRunList", "items": items,
		"metadata": map[string]any{"resourceVersion": "123456", "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDU2fQ"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return page
}

// benchRun is a finished run as a team using release 3 writes it (every
// kind of workspace, a ServiceAccount, a Pod template, labels) and as the
// controller leaves it after a retry: three steps, two results, two
// attempts, with the managed fields the API server keeps for its writers.
func benchRun(b *testing.B, i int) *v1.TaskRun {
	b.Helper()
	at := func(seconds int) *metav1.Time {
		t := metav1.NewTime(time.Date(2026, 11, 23, 10, 0, seconds, 0, time.UTC))
		return &t
	}
	run := wrappers.TaskRun("team-platform", fmt.Sprintf("build-%05d", i), "build").
		Label("team", "platform").Label("pipeline", "nightly").
		Workspace(v1.WorkspaceBinding{Name: "source",
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "source-build"}}).
		Workspace(v1.WorkspaceBinding{Name: "cache", EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("2Gi"))}}).
		Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}}).
		Workspace(v1.WorkspaceBinding{Name: "credentials", Secret: &corev1.SecretVolumeSource{SecretName: "git-credentials"}}).
		ServiceAccount("builder").
		PodTemplate(v1.PodTemplate{
			NodeSelector: map[string]string{"pool": "builds"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "builds", Effect: corev1.TaintEffectNoSchedule},
			},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}}},
				}}},
			}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
		}).
		Param("revision", "v1.2.3").
		Obj()
	run.Spec.Retries = ptr.To[int32](2)
	run.Spec.RetryOn = []v1.RetryReason{"PodFailed"}
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
	run.UID = types.UID(fmt.Sprintf("6f1c2a4e-0000-4000-8000-%012d", i))
	run.ResourceVersion = fmt.Sprint(100000 + i)
	run.Generation = 1
	run.CreationTimestamp = *at(0)
	podName := run.Name + "-pod"
	run.Status = v1.TaskRunStatus{
		Conditions: []metav1.Condition{{Type: "Succeeded", Status: metav1.ConditionTrue, Reason: string(v1.ReasonSucceeded),
			Message: "All steps completed", LastTransitionTime: *at(95), ObservedGeneration: 1}},
		PodName: podName + "-2", StartTime: at(1), CompletionTime: at(95),
		Results: []v1.RunResult{{Name: "digest", Value: ptr.To("sha256:0d7f9e0c1b5a4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f")},
			{Name: "version", Value: ptr.To("v1.2.3")}},
		Attempts: []v1.Attempt{
			{PodName: podName + "-1", StartTime: at(1), CompletionTime: at(40), Reason: "PodFailed",
				Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 87Mi."},
			{PodName: podName + "-2", StartTime: at(41), CompletionTime: at(95), Reason: string(v1.ReasonSucceeded)},
		},
	}
	for s, name := range []string{"checkout", "build", "test"} {
		run.Status.Steps = append(run.Status.Steps, v1.StepState{Name: name, State: "Terminated", ExitCode: ptr.To[int32](0),
			Reason: "Completed", StartedAt: at(41 + 15*s), FinishedAt: at(55 + 15*s)})
	}
	run.ManagedFields = []metav1.ManagedFieldsEntry{
		benchManagedFields(b, "kubectl-task", "", map[string]any{"metadata": map[string]any{"labels": run.Labels}, "spec": run.Spec}),
		benchManagedFields(b, "minitask", "status", map[string]any{"status": run.Status}),
	}
	return run
}

// benchManagedFields is the managed fields entry of a writer that set every
// field of owned, in the API server's fieldsV1 form.
func benchManagedFields(b *testing.B, manager, subresource string, owned any) metav1.ManagedFieldsEntry {
	b.Helper()
	raw, err := json.Marshal(owned)
	if err != nil {
		b.Fatal(err)
	}
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		b.Fatal(err)
	}
	fields, err := json.Marshal(fieldSet(value))
	if err != nil {
		b.Fatal(err)
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "minitask.dev/v1",
		Time: &metav1.Time{Time: time.Date(2026, 11, 23, 10, 1, 35, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(string(fields)), Subresource: subresource}
}

// fieldSet is value's fields as fieldsV1 names them: f:NAME for a field,
// k:{"name":...} for a list item with a name, {} for a leaf.
func fieldSet(value any) map[string]any {
	set := map[string]any{}
	switch v := value.(type) {
	case map[string]any:
		for key, child := range v {
			set["f:"+key] = fieldSet(child)
		}
	case []any:
		for i, item := range v {
			key := fmt.Sprintf("i:%d", i)
			if m, ok := item.(map[string]any); ok && m["name"] != nil {
				key = fmt.Sprintf(`k:{"name":%q}`, m["name"])
			}
			set[key] = fieldSet(item)
		}
		if len(set) > 0 {
			set["."] = map[string]any{}
		}
	}
	return set
}
