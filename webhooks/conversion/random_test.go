package conversion

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// objectGenerator makes random objects that are valid in their version, as
// the API server would store them: names match their patterns and are
// unique, enums hold allowed values, times are whole seconds, and optional
// fields are sometimes absent and sometimes empty.
type objectGenerator struct {
	r *rand.Rand
	// escapingText makes most text long runs of the characters the stash
	// writes longest (six bytes each in JSON, four in UTF-8), to test
	// bounds on its size.
	escapingText bool
}

func newObjectGenerator(seed uint64) *objectGenerator {
	return &objectGenerator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *objectGenerator) chance(p float64) bool { return g.r.Float64() < p }

func (g *objectGenerator) intn(n int) int { return g.r.IntN(n) }

func pick[T any](g *objectGenerator, from ...T) T { return from[g.intn(len(from))] }

const (
	lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	upper      = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

func (g *objectGenerator) chars(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.intn(len(alphabet))])
	}
	return b.String()
}

// length is mostly short, now and then the maximum.
func (g *objectGenerator) length(maxLen int) int {
	if g.chance(0.05) {
		return maxLen
	}
	return 1 + g.intn(min(maxLen, 12))
}

// dnsLabel matches ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ and is at most 63 long.
func (g *objectGenerator) dnsLabel() string {
	n := g.length(63)
	if n <= 2 {
		return g.chars(lowerAlnum, n)
	}
	return g.chars(lowerAlnum, 1) + g.chars(lowerAlnum+"--", n-2) + g.chars(lowerAlnum, 1)
}

// paramName matches ^[a-zA-Z_][a-zA-Z0-9_-]*$ and is at most 63 long.
func (g *objectGenerator) paramName() string {
	first := lowerAlnum[:26] + upper + "_"
	return g.chars(first, 1) + g.chars(first+"0123456789-", g.length(63)-1)
}

// reason matches metav1.Condition's reason pattern.
func (g *objectGenerator) reason() string {
	return g.chars(upper, 1) + g.chars(upper+lowerAlnum+"_", g.intn(12))
}

// text is any valid UTF-8, JSON's awkward characters included; often empty.
func (g *objectGenerator) text() string {
	if g.chance(0.3) {
		return ""
	}
	if g.escapingText && g.chance(0.8) {
		return strings.Repeat(pick(g, "<", "\x01", "\u2028", "🙂", `"`), 1+g.intn(300))
	}
	pieces := []string{"a", "Z", "0", " ", "\n", "\t", `"`, `\`, "<", "&", "é", "日本", "🙂", "$(params.x)", "\u2028", "{}"}
	var b strings.Builder
	for range 1 + g.intn(20) {
		b.WriteString(pick(g, pieces...))
	}
	return b.String()
}

// time is a whole second in UTC, as the API server stores times.
func (g *objectGenerator) time() metav1.Time {
	return metav1.NewTime(time.Unix(946684800+g.r.Int64N(40*365*24*3600), 0).UTC())
}

func (g *objectGenerator) optionalTime() *metav1.Time {
	if g.chance(0.4) {
		return nil
	}
	t := g.time()
	return &t
}

// uniqueNames returns up to n distinct names from name.
func uniqueNames(n int, name func() string) []string {
	seen := map[string]bool{}
	var names []string
	for range n {
		if s := name(); !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	return names
}

func (g *objectGenerator) stringMap() map[string]string {
	switch g.intn(3) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	m := map[string]string{}
	for range 1 + g.intn(3) {
		m[pick(g, "", "example.com/")+g.dnsLabel()] = g.text()
	}
	return m
}

// meta is metadata as the API server returns it; it never carries the
// conversion annotation, which is conversion's own.
func (g *objectGenerator) meta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:            g.dnsLabel(),
		Namespace:       g.dnsLabel(),
		UID:             types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", g.r.Uint32(), g.r.Uint64()>>16)),
		ResourceVersion: fmt.Sprint(g.r.Uint32()),
		Generation:      g.r.Int64N(10),
		Labels:          g.stringMap(),
		Annotations:     g.stringMap(),
	}
	if g.chance(0.9) {
		m.CreationTimestamp = g.time()
	}
	if g.chance(0.2) {
		m.DeletionTimestamp = g.optionalTime()
		m.Finalizers = []string{"example.com/" + g.dnsLabel()}
	}
	if g.chance(0.3) {
		controller := g.chance(0.5)
		m.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: g.dnsLabel(), UID: "0f6a", Controller: &controller,
		}}
	}
	if g.chance(0.3) {
		m.ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "minitask.dev/v1beta1",
			Time: g.optionalTime(), FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:steps":{}}}`),
		}}
	}
	return m
}

// list returns nil, an empty list, or up to n items from item.
func list[T any](g *objectGenerator, n int, item func(name string) T, name func() string) []T {
	switch g.intn(4) {
	case 0:
		return nil
	case 1:
		return []T{}
	}
	var items []T
	for _, s := range uniqueNames(1+g.intn(n), name) {
		items = append(items, item(s))
	}
	return items
}

func (g *objectGenerator) steps() []v1beta1.Step {
	if g.chance(0.05) {
		return nil // an empty spec, which round trips must survive too
	}
	var steps []v1beta1.Step
	for _, name := range uniqueNames(1+g.intn(4), g.dnsLabel) {
		step := v1beta1.Step{Name: name, Image: "registry.example/" + g.dnsLabel() + ":1", Script: g.text()}
		g.stepAdditions(&step)
		step.OnError = g.onError(&step)
		steps = append(steps, step)
	}
	return steps
}

func (g *objectGenerator) optionalString() *string {
	if g.chance(0.4) {
		return nil
	}
	s := g.text()
	return &s
}

func (g *objectGenerator) hubTask() *v1beta1.Task {
	if g.chance(0.2) {
		return &v1beta1.Task{ObjectMeta: g.meta(), Spec: v1beta1.TaskSpec{Steps: g.steps()}} // steps only: stashed by name, if at all
	}
	task := &v1beta1.Task{
		ObjectMeta: g.meta(),
		Spec: v1beta1.TaskSpec{
			Description: g.text(),
			Params: list(g, 4, func(name string) v1beta1.ParamSpec {
				return v1beta1.ParamSpec{Name: name, Description: g.text(), Default: g.optionalString()}
			}, g.paramName),
			Workspaces: list(g, 3, g.workspaceDeclaration, g.dnsLabel),
			Results:    g.results(),
			Steps:      g.steps(),
		},
	}
	if len(task.Spec.Results) > 0 {
		endWithScript(task.Spec.Steps)
	}
	return task
}

func (g *objectGenerator) spokeTask() *v1alpha1.Task {
	var steps []v1alpha1.Step
	for _, s := range g.steps() {
		steps = append(steps, v1alpha1.Step{Name: s.Name, Image: s.Image, Script: s.Script})
	}
	return &v1alpha1.Task{ObjectMeta: g.meta(), Spec: v1alpha1.TaskSpec{Steps: steps}}
}

// conditions returns a hub run's conditions; half of the Succeeded ones carry
// exactly what its phase would derive, so that both stash paths are taken.
func (g *objectGenerator) conditions(run *v1beta1.TaskRun) []metav1.Condition {
	if g.chance(0.2) {
		return pick(g, nil, []metav1.Condition{})
	}
	var conditions []metav1.Condition
	otherTypes := uniqueNames(g.intn(3), func() string { return pick(g, "Ready", "PodScheduled", "example.com/Audited") })
	for _, t := range otherTypes {
		conditions = append(conditions, metav1.Condition{
			Type: t, Status: pick(g, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown),
			Reason: g.reason(), Message: g.text(), LastTransitionTime: g.time(), ObservedGeneration: g.r.Int64N(3),
		})
	}
	if g.chance(0.85) {
		row := pick(g, runstate.Reasons()...)
		c := metav1.Condition{Type: v1beta1.ConditionSucceeded, Status: row.Status, Reason: string(row.Reason), LastTransitionTime: ltt(run)}
		if g.chance(0.5) {
			c.LastTransitionTime, c.Message, c.ObservedGeneration = g.time(), g.text(), g.r.Int64N(3)
		}
		at := g.intn(len(conditions) + 1)
		conditions = append(conditions[:at], append([]metav1.Condition{c}, conditions[at:]...)...)
	}
	return conditions
}

// ltt is the lastTransitionTime the contract derives for a hub run's
// Succeeded condition, written out here apart from the code under test.
func ltt(run *v1beta1.TaskRun) metav1.Time {
	switch {
	case run.Status.CompletionTime != nil:
		return *run.Status.CompletionTime
	case run.Status.StartTime != nil:
		return *run.Status.StartTime
	default:
		return run.CreationTimestamp
	}
}

// timeout is absent, set from Go (written canonically), or written by hand
// in one of the ways Go parses that is not canonical: those must keep their
// text through conversion.
func (g *objectGenerator) timeout() *v1beta1.Duration {
	switch g.intn(5) {
	case 0, 1:
		return nil
	case 2:
		return v1beta1.NewDuration(time.Duration(g.r.Int64N(48)) * time.Hour / 2)
	case 3:
		return wrappers.BetaDurationText(pick(g, "10m", "1h30m", "90s", "0s", "0.0s", "1.5h", "2h0m", "1h0m0s", "500ms", "3600s", "1h1m1s1ms"))
	}
	return v1beta1.NewDuration(time.Duration(g.r.Int64N(int64(100 * time.Hour))))
}

func (g *objectGenerator) stepState(name string) v1beta1.StepState {
	s := v1beta1.StepState{
		Name:      name,
		State:     pick(g, "", v1beta1.StepWaiting, v1beta1.StepRunning, v1beta1.StepTerminated),
		Reason:    pick(g, "", "Completed", "Error", "OOMKilled", "ContainerCreating"),
		StartedAt: g.optionalTime(),
	}
	if s.State == v1beta1.StepTerminated {
		code := pick(g, 0, 1, 2, 137, g.r.Int32())
		s.ExitCode = &code
		s.FinishedAt = g.optionalTime()
	}
	return s
}

func (g *objectGenerator) hubTaskRun() *v1beta1.TaskRun {
	run := &v1beta1.TaskRun{ObjectMeta: g.meta()}
	if g.chance(0.05) {
		return run // no spec and no status
	}
	run.Spec = v1beta1.TaskRunSpec{
		TaskRef: v1beta1.TaskRef{Name: g.dnsLabel()},
		Params: list(g, 4, func(name string) v1beta1.Param {
			return v1beta1.Param{Name: name, Value: g.text()}
		}, g.paramName),
		Timeout:                 g.timeout(),
		Status:                  pick(g, "", v1beta1.TaskRunSpecStatusCancelled),
		Workspaces:              list(g, 3, g.workspaceBinding, g.dnsLabel),
		ServiceAccountName:      pick(g, "", g.dnsLabel()),
		PodTemplate:             g.podTemplate(),
		Retries:                 g.retries(),
		RetryOn:                 g.retryOn(),
		TTLSecondsAfterFinished: g.ttl(),
	}
	if g.chance(0.1) {
		return run // no status yet
	}
	run.Status = v1beta1.TaskRunStatus{
		PodName:        pick(g, "", g.dnsLabel()),
		StartTime:      g.optionalTime(),
		CompletionTime: g.optionalTime(),
		Steps:          list(g, 4, g.stepState, g.dnsLabel),
		Results:        g.runResults(),
		Attempts:       g.attempts(),
	}
	run.Status.Conditions = g.conditions(run)
	if g.chance(0.2) {
		// Only what v1alpha1 expresses: the Succeeded condition its phase derives.
		run.Spec = v1beta1.TaskRunSpec{TaskRef: run.Spec.TaskRef}
		run.Status.Steps, run.Status.Results, run.Status.Attempts = nil, nil, nil
		phase := runstate.PhaseFromCondition(apimeta.FindStatusCondition(run.Status.Conditions, v1beta1.ConditionSucceeded))
		run.Status.Conditions = nil
		if derived := runstate.ConditionFromPhase(phase, ltt(run)); derived != nil {
			run.Status.Conditions = []metav1.Condition{*derived}
		}
	}
	return run
}

func (g *objectGenerator) spokeTaskRun() *v1alpha1.TaskRun {
	run := &v1alpha1.TaskRun{ObjectMeta: g.meta()}
	if g.chance(0.05) {
		return run // no spec and no status
	}
	run.Spec.TaskRef = g.dnsLabel()
	if g.chance(0.1) {
		return run // no status yet
	}
	run.Status = v1alpha1.TaskRunStatus{
		Phase: pick(g, v1alpha1.TaskRunPhaseNone, v1alpha1.TaskRunPhasePending, v1alpha1.TaskRunPhaseRunning,
			v1alpha1.TaskRunPhaseSucceeded, v1alpha1.TaskRunPhaseFailed),
		PodName:    pick(g, "", g.dnsLabel()),
		StartTime:  g.optionalTime(),
		FinishTime: g.optionalTime(),
	}
	return run
}
