package apis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// runWithLowerCaseConditionTime is a finished TaskRun whose condition's
// lastTransitionTime is in lower case, as release 2's CRD let a status
// writer store it: CEL cannot read it as a timestamp, nor Go as a time.
const runWithLowerCaseConditionTime = `{
  "apiVersion": "minitask.dev/v1beta1", "kind": "TaskRun",
  "spec": {"taskRef": {"name": "build"}},
  "status": {"startTime": "2024-05-01T10:00:00Z",
             "conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded", "message": "",
                             "lastTransitionTime": "2024-05-01t10:05:00z"}]}
}`

// write is one patch of a run, to its status when status is set.
type write struct {
	patch     string
	patchType types.PatchType
	status    bool
}

// TestAPIServerLetsAStoredConditionTimeBe stores a run whose condition's
// lastTransitionTime Go cannot read, straight in etcd, and checks that
// every write that leaves that time as stored is admitted (a label, a
// finalizer added and removed, the storage migration's no-op, a status
// write of other fields, the time's repair), while one that writes such a
// time anew is refused naming it. A CEL rule that reads the time fails to
// evaluate on it, which the API server does not ratchet, and refused them
// all.
func TestAPIServerLetsAStoredConditionTimeBe(t *testing.T) {
	merge := func(patch string, status bool) write { return write{patch, types.MergePatchType, status} }
	jsonPatch := func(patch string) write { return write{patch, types.JSONPatchType, true} }
	cases := map[string]struct {
		writes []write
		// refused is the field the last write's refusal must name; empty
		// when every write must be admitted.
		refused string
	}{
		"a label": {writes: []write{merge(`{"metadata":{"labels":{"team":"a"}}}`, false)}},
		"a finalizer added and removed": {writes: []write{
			merge(`{"metadata":{"finalizers":["example.com/keep"]}}`, false),
			merge(`{"metadata":{"finalizers":null}}`, false)}},
		"the storage migration's no-op rewrite": {writes: []write{merge(`{}`, false)}},
		"a status write of another field":       {writes: []write{merge(`{"status":{"podName":"build-1"}}`, true)}},
		"a new message for the condition, its time kept": {writes: []write{
			jsonPatch(`[{"op":"replace","path":"/status/conditions/0/message","value":"done"}]`)}},
		"the time's repair": {writes: []write{
			jsonPatch(`[{"op":"replace","path":"/status/conditions/0/lastTransitionTime","value":"2024-05-01T10:05:00Z"}]`)}},
		"another lower-case time for the condition": {
			writes:  []write{jsonPatch(`[{"op":"replace","path":"/status/conditions/0/lastTransitionTime","value":"2024-05-02t10:05:00z"}]`)},
			refused: "status.conditions[0].lastTransitionTime"},
		"a zone offset Go refuses for the condition": {
			writes:  []write{jsonPatch(`[{"op":"replace","path":"/status/conditions/0/lastTransitionTime","value":"2024-05-01T10:05:00+25:00"}]`)},
			refused: "status.conditions[0].lastTransitionTime"},
		"the stored time given to a new condition": {
			writes: []write{jsonPatch(`[{"op":"add","path":"/status/conditions/-","value":{"type":"Ready","status":"True",` +
				`"reason":"Ready","message":"","lastTransitionTime":"2024-05-01t10:05:00z"}}]`)},
			refused: "status.conditions[1].lastTransitionTime"},
	}
	ctx := context.Background()
	ns := env.Namespace(t)
	i := 0
	for name, tc := range cases {
		i++
		runName := fmt.Sprintf("run-%d", i)
		env.PutInEtcd(t, "taskruns", ns, runName, []byte(runWithLowerCaseConditionTime))
		t.Run(name, func(t *testing.T) {
			var err error
			for _, w := range tc.writes {
				run := &metav1.PartialObjectMetadata{}
				run.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRun"))
				run.SetNamespace(ns)
				run.SetName(runName)
				patch := client.RawPatch(w.patchType, []byte(w.patch))
				if w.status {
					err = env.Client.Status().Patch(ctx, run, patch)
				} else {
					err = env.Client.Patch(ctx, run, patch)
				}
				if err != nil {
					break
				}
			}
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refused == "":
			case err == nil:
				t.Errorf("admitted; want it refused naming %s", tc.refused)
			case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.refused):
				t.Errorf("want an Invalid error naming %s, got: %v", tc.refused, err)
			}
		})
	}
}
