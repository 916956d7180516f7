package timerepair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/perobject"
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
	// Reader reads the TaskRun CRD, uncached, before each pass: a pass is
	// made only while its storedVersions may hold runs with such times
	// (needed). Nil, every pass is made.
	Reader client.Reader
	// Backoff paces the passes Start tries again; zero means defaultBackoff.
	Backoff wait.Backoff
}

// defaultBackoff paces the passes that stopped early: the first again after a
// second, then twice as long each time, at most 5 minutes apart, for as long
// as the manager leads. At start the conversion webhook may not serve yet (a
// LIST of runs stored as v1alpha1 needs it), and one pass is all there is.
var defaultBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 5 * time.Minute}

// NeedLeaderElection makes the repair run on the leader only.
func (*Repairer) NeedLeaderElection() bool { return true }

// Start repairs every stored TaskRun, logging what it did, if the TaskRun
// CRD's storedVersions says that one may need it; else it reads nothing. A pass that
// stopped early (a LIST that failed, an API server that could not serve) is
// made again, with backoff, until one completes or the manager stops. Runs
// the API server refused are logged, not retried: a restart tries them
// again. It never fails the manager: conversion reads a run it could not
// repair regardless.
func (r *Repairer) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("timerepair")
	ctx = log.IntoContext(ctx, logger)
	backoff := r.Backoff
	if backoff.Duration == 0 {
		backoff = defaultBackoff
	}
	// DelayFunc, unlike ExponentialBackoff, keeps trying once the delay
	// reaches the cap.
	_ = backoff.DelayFunc().Until(ctx, true, false, func(ctx context.Context) (bool, error) {
		if !r.needed(ctx) {
			return true, nil
		}
		repaired, err := r.Repair(ctx)
		var incomplete *IncompleteError
		switch {
		case errors.As(err, &incomplete):
			logger.Error(err, "Some stored TaskRuns keep times Go cannot read; every other one was repaired",
				"repaired", repaired, "notRepaired", len(incomplete.Failed))
			return true, nil
		case err != nil:
			logger.Error(err, "Repairing malformed times of stored TaskRuns stopped early; trying again", "repaired", repaired)
			return false, nil
		}
		if repaired > 0 {
			logger.Info("Rewrote malformed times of stored TaskRuns in RFC 3339", "taskRuns", repaired)
		}
		return true, nil
	})
	return nil
}

// Repair rewrites, in every TaskRun, each time a typed decode would refuse,
// and returns how many TaskRuns it patched, whatever storedVersions says
// (Start asks it first). It lists them through v1beta1, the version the
// runs that may hold such times are stored in (see the package
// documentation). It patches a page's runs after
// reading the page, in the order listed, holding only those that need it.
//
// A run that cannot be patched does not stop the others. One deleted since
// it was listed needs nothing; one written since is read again (repairRun);
// one the API server refuses is logged, and Repair goes on and then returns
// an *IncompleteError naming them. Only a LIST that fails, or a request the
// API server could not serve at all (unservable), ends the pass early, with
// that error.
func (r *Repairer) Repair(ctx context.Context) (int, error) {
	logger := log.FromContext(ctx)
	lister, err := newRunLister(r.Config, r.HTTPClient)
	if err != nil {
		return 0, err
	}
	repaired := 0
	failed := perobject.Failures{}
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
			patched, err := r.repairRun(ctx, lister, repair)
			switch {
			case err == nil:
				if patched {
					repaired++
				}
			case perobject.Unservable(err):
				return repaired, err
			default:
				logger.Error(err, "TaskRun not repaired; it keeps times Go cannot read",
					"namespace", repair.namespace, "name", repair.name)
				failed[types.NamespacedName{Namespace: repair.namespace, Name: repair.name}] = err
			}
		}
		if continueToken == "" {
			break
		}
	}
	if len(failed) > 0 {
		return repaired, &IncompleteError{Failed: failed}
	}
	return repaired, nil
}

// maxPatches is how many times repairRun patches a run that keeps being
// written between its read and its patch before it gives up on it.
const maxPatches = 3

// repairRun patches repair's run and reports whether it did. A run written
// since it was read, so that the patch does not apply, is read again and
// patched with what it holds then: the write validated the times it set,
// but may have left others as stored. A run deleted meanwhile, or left with
// nothing to repair, is not patched, and that is no error.
func (r *Repairer) repairRun(ctx context.Context, lister *runLister, repair runRepair) (bool, error) {
	for attempt := 1; ; attempt++ {
		err := r.patch(ctx, repair)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !changedSinceRead(err) || attempt == maxPatches:
			return false, err
		}
		log.FromContext(ctx).Info("TaskRun written since it was read; reading it again",
			"namespace", repair.namespace, "name", repair.name)
		run, err := lister.getRun(ctx, repair.namespace, repair.name)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading TaskRun %s/%s again: %w", repair.namespace, repair.name, err)
		}
		if repair.ops = repairOps(&run.Status); len(repair.ops) == 0 {
			return false, nil
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
