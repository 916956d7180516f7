package timerepair

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Repairer rewrites the malformed times of stored TaskRuns. It is a manager
// Runnable that runs once, on the leader.
type Repairer struct {
	// Config reaches the API server to list TaskRuns, uncached and read as
	// raw JSON (see runLister), so that nothing decodes them typed.
	Config *rest.Config
	// HTTPClient, if set, carries the LIST requests (the manager's, so that
	// the repair shares its connections); else one is built from Config.
	HTTPClient *http.Client
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
// and returns how many TaskRuns it patched. It patches a page's runs after
// reading the page, in the order listed, holding only those that need it.
func (r *Repairer) Repair(ctx context.Context) (int, error) {
	lister, err := newRunLister(r.Config, r.HTTPClient)
	if err != nil {
		return 0, err
	}
	repaired := 0
	continueToken := ""
	for {
		var pending []runRepair
		continueToken, err = lister.listPage(ctx, continueToken, func(run *storedRun) error {
			if ops := repairOps(&run.Status); len(ops) > 0 {
				pending = append(pending, runRepair{namespace: run.Metadata.Namespace, name: run.Metadata.Name, ops: ops})
			}
			return nil
		})
		if err != nil {
			return repaired, fmt.Errorf("listing TaskRuns: %w", err)
		}
		for _, repair := range pending {
			if err := r.patch(ctx, repair); err != nil {
				return repaired, err
			}
			repaired++
		}
		if continueToken == "" {
			return repaired, nil
		}
	}
}

// runRepair is the patch one TaskRun needs.
type runRepair struct {
	namespace, name string
	ops             []patchOp
}

// patch applies repair to its run's status. The patch tests each old value,
// so a concurrent write is never overwritten.
func (r *Repairer) patch(ctx context.Context, repair runRepair) error {
	patch, err := json.Marshal(repair.ops)
	if err != nil {
		return err
	}
	log.FromContext(ctx).Info("Rewriting malformed times in RFC 3339",
		"namespace", repair.namespace, "name", repair.name, "fields", len(repair.ops)/2)
	// Metadata only: the patch is raw, and the answer need not be decoded
	// further than the run's metadata.
	run := &metav1.PartialObjectMetadata{}
	run.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("TaskRun"))
	run.SetNamespace(repair.namespace)
	run.SetName(repair.name)
	if err := r.Writer.Status().Patch(ctx, run, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return fmt.Errorf("repairing the times of TaskRun %s/%s: %w", repair.namespace, repair.name, err)
	}
	return nil
}

// patchOp is one JSON Patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// repairOps returns a test and a replace operation for each time in the
// TaskRun's status that needs repair, in a fixed order (so that patches are
// deterministic): startTime, completionTime, then conditions, steps and
// attempts, item by item.
func repairOps(status *storedStatus) []patchOp {
	var ops []patchOp
	// path is called only for a time that needs repair: building every
	// path of every run would be most of the repair's allocations.
	check := func(stored storedTime, path func() string) {
		if !stored.isSet {
			return
		}
		if fixed, ok := canonical(stored.value); ok {
			at := path()
			ops = append(ops, patchOp{"test", at, stored.value}, patchOp{"replace", at, fixed})
		}
	}
	field := func(name string) func() string {
		return func() string { return "/status/" + name }
	}
	item := func(list string, index int, name string) func() string {
		return func() string { return "/status/" + list + "/" + strconv.Itoa(index) + "/" + name }
	}
	check(status.StartTime, field("startTime"))
	check(status.CompletionTime, field("completionTime"))
	for i, condition := range status.Conditions {
		check(condition.LastTransitionTime, item("conditions", i, "lastTransitionTime"))
	}
	for i, step := range status.Steps {
		check(step.StartedAt, item("steps", i, "startedAt"))
		check(step.FinishedAt, item("steps", i, "finishedAt"))
	}
	for i, attempt := range status.Attempts {
		check(attempt.StartTime, item("attempts", i, "startTime"))
		check(attempt.CompletionTime, item("attempts", i, "completionTime"))
	}
	return ops
}
