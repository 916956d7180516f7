package stashguard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/config/crd"
	"github.com/minitask-dev/minitask/internal/storedversions"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// storedVersionsSaying is a StoredVersions that says mayHold.
type storedVersionsSaying bool

func (s storedVersionsSaying) MayHoldUnreadableTimes() bool { return bool(s) }

// TestV1StatusWritesSkipTheDecodeOnlyWhereNoRelease2RunRemains: a v1 status
// write is judged only for a run that no typed decode takes (a time release
// 2 let in), so it is refused while one may remain and allowed undecoded
// once the CRD's storedVersions says none can; a main-resource write is
// still decoded, for its size and for such a run. Unknown (no watcher, or
// none seen yet) decodes.
func TestV1StatusWritesSkipTheDecodeOnlyWhereNoRelease2RunRemains(t *testing.T) {
	const (
		release2Run = `{"spec":{"taskRef":{"name":"t"},"timeouts":{"total":"1h"}},"status":{"startTime":"2024-05-01t10:00:00z"}}`
		readable    = `{"spec":{"taskRef":{"name":"t"},"timeouts":{"total":"1h"}},"status":{"startTime":"2024-05-01T10:00:00Z"}}`
		notJSON     = `{"status":`
	)
	statusWrite := func(old, obj string) admission.Request {
		return v1Request(admissionv1.Update, "status", old, obj)
	}
	tests := map[string]struct {
		storedVersions StoredVersions
		req            admission.Request
		allowed        bool
	}{
		"no watcher: a status write keeping release 2's time is refused": {
			storedVersions: nil, req: statusWrite(release2Run, release2Run), allowed: false,
		},
		"a watcher that has seen nothing yet: refused": {
			storedVersions: &storedversions.Watcher{}, req: statusWrite(release2Run, release2Run), allowed: false,
		},
		"storedVersions may hold release 2's runs: refused": {
			storedVersions: storedVersionsSaying(true), req: statusWrite(release2Run, release2Run), allowed: false,
		},
		"storedVersions may hold release 2's runs: a readable status write passes": {
			storedVersions: storedVersionsSaying(true), req: statusWrite(readable, readable), allowed: true,
		},
		"storedVersions [v1]: a status write is not decoded, so even bytes no decoder takes pass": {
			storedVersions: storedVersionsSaying(false), req: statusWrite(notJSON, notJSON), allowed: true,
		},
		"storedVersions [v1]: a readable status write passes": {
			storedVersions: storedVersionsSaying(false), req: statusWrite(readable, readable), allowed: true,
		},
		"storedVersions [v1]: a create is still decoded": {
			storedVersions: storedVersionsSaying(false), req: v1Request(admissionv1.Create, "", "", release2Run), allowed: false,
		},
		"storedVersions [v1]: a main-resource write is still decoded": {
			storedVersions: storedVersionsSaying(false), req: v1Request(admissionv1.Update, "", release2Run, release2Run),
			allowed: false,
		},
	}
	rules, err := loadHubRules(crd.TaskRunsFile, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newTaskRunGuard(rules)
			g.storedVersions = tc.storedVersions
			resp := g.Handle(t.Context(), tc.req)
			if resp.Allowed != tc.allowed {
				t.Errorf("allowed = %v (%v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
		})
	}
}

// BenchmarkV1StatusWrite is what the TaskRun guard costs the API server's
// call for a v1 status write as the controller sends it (a running run's
// three steps and its condition; old and new objects): decoded, while a
// run release 2 stored may remain (storedVersions=may-hold), and not, once
// the CRD's storedVersions lists v1 alone (storedVersions=v1); of a run
// whose Task's spec is pinned (pinned=true, three steps of 1 KB scripts, as
// every run of a Task from release 7) and not.
func BenchmarkV1StatusWrite(b *testing.B) {
	rules, err := loadHubRules(crd.TaskRunsFile, "v1beta1")
	if err != nil {
		b.Fatal(err)
	}
	at := metav1.NewTime(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	run := wrappers.TaskRun("team", "build-1", "build").Param("revision", "v1.2.3").Timeout(time.Hour).
		PodName("build-1-pod").Started(at).
		Conditions(metav1.Condition{Type: "Succeeded", Status: metav1.ConditionUnknown, Reason: "Running",
			Message: `running step "build" (2 of 3)`, LastTransitionTime: at}).
		StepStates(v1.StepState{Name: "checkout", State: "Terminated", Reason: "Completed", StartedAt: &at, FinishedAt: &at},
			v1.StepState{Name: "build", State: "Running", StartedAt: &at}, v1.StepState{Name: "test", State: "Waiting"}).
		Obj()
	pinned := run.DeepCopy()
	script := strings.Repeat("echo building the release, step by step\n", 25)
	pinned.Status.TaskSpec = &v1.TaskSpec{Steps: []v1.Step{
		{Name: "checkout", Image: "alpine:3", Script: script},
		{Name: "build", Image: "golang:1", Script: script, Timeout: v1.NewDuration(10 * time.Minute)},
		{Name: "test", Image: "golang:1", Script: script},
	}}
	for _, pin := range []*v1.TaskRun{run, pinned} {
		old, err := json.Marshal(pin)
		if err != nil {
			b.Fatal(err)
		}
		pin.Status.Steps[1].State = "Terminated"
		obj, err := json.Marshal(pin)
		if err != nil {
			b.Fatal(err)
		}
		req := v1Request(admissionv1.Update, "status", string(old), string(obj))
		for name, stored := range map[string]StoredVersions{"may-hold": storedVersionsSaying(true), "v1": storedVersionsSaying(false)} {
			b.Run(fmt.Sprintf("pinned=%t/storedVersions=%s", pin.Status.TaskSpec != nil, name), func(b *testing.B) {
				g := newTaskRunGuard(rules)
				g.storedVersions = stored
				b.ReportAllocs()
				for b.Loop() {
					if resp := g.Handle(b.Context(), req); !resp.Allowed {
						b.Fatalf("refused: %v", resp.Result)
					}
				}
			})
		}
	}
}
