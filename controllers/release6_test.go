package controllers_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestRunsOfRelease6WaitForIt plays a rollback from release 6, which stores
// v1, to this release: objects stored as v1 with what only v1 expresses
// (put in etcd as release 6 wrote them) are read through v1beta1, and a run
// that uses them is left Pending, its message naming release 6, with no Pod;
// a run of the same Task stored with nothing of the kind runs.
func TestRunsOfRelease6WaitForIt(t *testing.T) {
	h := newHarness(t)
	steps := `"steps":[{"name":"lint","image":"golang:1.26","command":["gofmt","-l"],"args":["$(params.files[*])"]}]`
	h.Env.PutInEtcd(t, "tasks", h.NS, "typed", []byte(`{"apiVersion":"minitask.dev/v1","kind":"Task","spec":{`+
		`"params":[{"name":"files","type":"array","default":["a.go","b.go"]}],`+steps+`}}`))
	h.Env.PutInEtcd(t, "tasks", h.NS, "plain", []byte(`{"apiVersion":"minitask.dev/v1","kind":"Task","spec":{`+
		`"params":[{"name":"greeting","type":"string","default":"hi"}],"steps":[{"name":"say","image":"alpine:3","script":"echo hi"}]}}`))
	h.Env.PutInEtcd(t, "taskruns", h.NS, "typed-task-run", []byte(`{"apiVersion":"minitask.dev/v1","kind":"TaskRun","spec":{"taskRef":{"name":"typed"}}}`))
	h.Env.PutInEtcd(t, "taskruns", h.NS, "pending-timeout-run", []byte(`{"apiVersion":"minitask.dev/v1","kind":"TaskRun","spec":{`+
		`"taskRef":{"name":"plain"},"timeouts":{"total":"1h","pending":"5m"}}}`))
	h.Env.PutInEtcd(t, "taskruns", h.NS, "plain-run", []byte(`{"apiVersion":"minitask.dev/v1","kind":"TaskRun","spec":{`+
		`"taskRef":{"name":"plain"},"timeouts":{"total":"1h"}}}`))

	h.startController(t, time.Hour)

	h.waitForCondition(t, "typed-task-run", condition{metav1.ConditionUnknown, v1.ReasonPending,
		`Task "typed" uses what only v1 expresses (array or object params, timeouts.pending): its runs need minitask release 6; waiting for a roll forward`})
	h.waitForCondition(t, "pending-timeout-run", condition{metav1.ConditionUnknown, v1.ReasonPending,
		`TaskRun "pending-timeout-run" uses what only v1 expresses (array or object params, timeouts.pending): it needs minitask release 6; waiting for a roll forward`})
	h.WaitForPod(t, "plain-run-pod")
	for _, run := range []string{"typed-task-run", "pending-timeout-run"} {
		if pods := h.pods(t, run); len(pods) != 0 {
			t.Errorf("TaskRun %s, which needs release 6, has %d Pods", run, len(pods))
		}
	}
}
