package timerepair

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Repairer rewrites the malformed times of stored TaskRuns. It is a manager
// Runnable that runs once, on the leader.
type Repairer struct {
	// Reader lists TaskRuns; uncached, so that nothing decodes them typed.
	Reader client.Reader
	// Writer patches their status.
	Writer client.Client
}

// NeedLeaderElection makes the repair run on the leader only.
func (*Repairer) NeedLeaderElection() bool { return true }

// Start repairs every stored TaskRun once, logging what it did. A failure is
// logged, not returned: the manager must run even if one object cannot be
// repaired, and conversion reads that one regardless.
func (r *Repairer) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("timerepair")
	repaired, err := r.Repair(ctx)
	if err != nil {
		logger.Error(err, "Repairing malformed times of stored TaskRuns", "repaired", repaired)
		return nil
	}
	if repaired > 0 {
		logger.Info("Rewrote malformed times of stored TaskRuns in RFC 3339", "taskRuns", repaired)
	}
	return nil
}

// Repair rewrites, in every TaskRun, each time a typed decode would refuse,
// and returns how many TaskRuns it patched.
func (r *Repairer) Repair(ctx context.Context) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRunList"))
	repaired := 0
	for {
		if err := r.Reader.List(ctx, list, client.Limit(500), client.Continue(list.GetContinue())); err != nil {
			return repaired, fmt.Errorf("listing TaskRuns: %w", err)
		}
		for i := range list.Items {
			ok, err := r.repairOne(ctx, &list.Items[i])
			if err != nil {
				return repaired, err
			}
			if ok {
				repaired++
			}
		}
		if list.GetContinue() == "" {
			return repaired, nil
		}
	}
}

// repairOne patches run's status when a time in it needs repair. The patch
// tests each old value, so a concurrent write is never overwritten.
func (r *Repairer) repairOne(ctx context.Context, run *unstructured.Unstructured) (bool, error) {
	ops := repairOps(run.Object)
	if len(ops) == 0 {
		return false, nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return false, err
	}
	log.FromContext(ctx).Info("Rewriting malformed times in RFC 3339",
		"namespace", run.GetNamespace(), "name", run.GetName(), "fields", len(ops)/2)
	if err := r.Writer.Status().Patch(ctx, run, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return false, fmt.Errorf("repairing the times of TaskRun %s/%s: %w", run.GetNamespace(), run.GetName(), err)
	}
	return true, nil
}

// patchOp is one JSON Patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// repairOps returns a test and a replace operation for each time in the
// TaskRun's status that needs repair: the paths of every metav1.Time in
// v1beta1's TaskRunStatus.
func repairOps(obj map[string]any) []patchOp {
	var ops []patchOp
	check := func(path string, value any) {
		s, ok := value.(string)
		if !ok {
			return
		}
		if fixed, ok := canonical(s); ok {
			ops = append(ops, patchOp{"test", path, s}, patchOp{"replace", path, fixed})
		}
	}
	status, _ := obj["status"].(map[string]any)
	check("/status/startTime", status["startTime"])
	check("/status/completionTime", status["completionTime"])
	for _, list := range timeLists {
		items, _ := status[list.name].([]any)
		for i, item := range items {
			entry, _ := item.(map[string]any)
			for _, field := range list.fields {
				check("/status/"+list.name+"/"+strconv.Itoa(i)+"/"+field, entry[field])
			}
		}
	}
	return ops
}

// timeLists are the lists in TaskRunStatus whose items hold times, in the
// order the patch visits them (a slice, so that patches are deterministic).
var timeLists = []struct {
	name   string
	fields []string
}{
	{"conditions", []string{"lastTransitionTime"}},
	{"steps", []string{"startedAt", "finishedAt"}},
}
