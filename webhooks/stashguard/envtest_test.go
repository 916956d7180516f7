package stashguard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/stashguard"
)

// env is the API server the subtests of TestThroughAPIServer share.
var env *testenv.Env

// TestThroughAPIServer checks, through a real API server with the generated
// webhook configuration, that the guard sees what it must and only that.
func TestThroughAPIServer(t *testing.T) {
	env = testenv.ForTest(t, webhooks.SetupWithManager)
	for name, test := range map[string]func(*testing.T){
		"a forged annotation on a v1alpha1 update":              testForgedUpdate,
		"a forged annotation on a v1alpha1 create":              testForgedCreate,
		"a forged Task annotation":                              testForgedTask,
		"a v1alpha1 write v1beta1 allows":                       testHonestV1alpha1Writes,
		"v1beta1 writes past 256 KiB of annotations":            testOversizedWrites,
		"the match condition's bound holds when escaped":        testBoundHoldsForEscapedText,
		"an object stored with its stash omitted":               testOmittedStash,
		"small v1beta1 writes never reach the webhook":          testSmallWritesSkipTheWebhook,
		"every TaskRun field the stash carries is counted":      testStatusCountsForSize,
		"small writes of release 3's fields skip the webhook":   testSmallRelease3WritesSkipTheWebhook,
		"big writes of release 3's fields are refused":          testBigRelease3WritesAreRefused,
		"forged stashes of release 3's fields are refused":      testForgedRelease3Stash,
		"a Task at the CRD's limits passes the match condition": testMaximalTaskPassesTheMatchCondition,
		"writes of issue 15's fields":                           testRunSemanticsWrites,
		"forged stashes of issue 15's fields are refused":       testForgedRunSemanticsStash,
		"v1 writes read in every version":                       testV1WritesReadInEveryVersion,
		"what only v1 expresses is accepted, without loss":      testV1OnlyFieldsAreAccepted,
	} {
		t.Run(name, test)
	}
}

// forged is issue 11's annotation: a negative timeout, an unknown
// spec.status and duplicate params.
const forged = `{"v1beta1":{"spec":{"timeout":"-1h","status":"Paused","params":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}}}`

func testForgedUpdate(t *testing.T) {
	ns := env.Namespace(t)
	create(t, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Timeout: v1beta1.NewDuration(time.Hour)}})
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "r", spoke)
	metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, conversion.AnnotationConversionData, forged)
	// As the API server does, CEL waits until the schema's errors are fixed.
	checkInvalid(t, env.Client.Update(context.Background(), spoke),
		`spec.status: Unsupported value: "Paused": supported values: "Cancelled"`,
		`spec.params[1]: Duplicate value: {"name":"a"}`,
		"some validation rules were not checked because the object was invalid")
	metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, conversion.AnnotationConversionData, `{"v1beta1":{"spec":{"timeout":"-1h"}}}`)
	checkInvalid(t, env.Client.Update(context.Background(), spoke),
		`spec.timeout: Invalid value: "-1h": timeout must not be negative`, "spec.timeout: Invalid value: timeout is immutable")

	// Valid values the spec did not have are refused too: it is immutable.
	metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, conversion.AnnotationConversionData,
		`{"v1beta1":{"spec":{"timeout":"2h","params":[{"name":"a","value":"1"}]}}}`)
	checkInvalid(t, env.Client.Update(context.Background(), spoke),
		"spec.timeout: Invalid value: timeout is immutable", "spec.params: Invalid value: params are immutable")

	got := &v1beta1.TaskRun{}
	get(t, ns, "r", got)
	if got.Spec.Timeout.String() != "1h0m0s" || got.Spec.Params != nil || got.Spec.Status != "" {
		t.Errorf("the stored spec changed: %+v", got.Spec)
	}
}

func testForgedCreate(t *testing.T) {
	ns := env.Namespace(t)
	spoke := &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns,
		Annotations: map[string]string{conversion.AnnotationConversionData: forged}},
		Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
	checkInvalid(t, env.Client.Create(context.Background(), spoke),
		`spec.status: Unsupported value: "Paused"`, "spec.params[1]: Duplicate value")
	spoke.Annotations[conversion.AnnotationConversionData] = `{"v1beta1":{"spec":{"timeout":"-1h"}}}`
	checkInvalid(t, env.Client.Create(context.Background(), spoke), `spec.timeout: Invalid value: "-1h": timeout must not be negative`)
}

func testForgedTask(t *testing.T) {
	ns := env.Namespace(t)
	stash := `{"v1beta1":{"spec":{"description":"` + strings.Repeat("d", 4097) + `","params":[{"name":"1p","default":"x"}]}}}`
	spoke := &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns,
		Annotations: map[string]string{conversion.AnnotationConversionData: stash}},
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "s", Image: "alpine"}}}}
	checkInvalid(t, env.Client.Create(context.Background(), spoke),
		"spec.description: Too long: may not be more than 4096", `spec.params[0].name: Invalid value: "1p"`)
}

// testHonestV1alpha1Writes: what v1alpha1 clients do every day still works,
// through the guard, and loses nothing.
func testHonestV1alpha1Writes(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	create(t, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Timeout: durationText(t, "10m"),
			Params: []v1beta1.Param{{Name: "p", Value: "v"}}}})
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "r", spoke)
	spoke.Labels = map[string]string{"touched": "v1alpha1"}
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatalf("labelling through v1alpha1: %v", err)
	}
	start := metav1.NewTime(time.Now().Truncate(time.Second))
	spoke.Status = v1alpha1.TaskRunStatus{Phase: v1alpha1.TaskRunPhaseRunning, StartTime: &start}
	if err := env.Client.Status().Update(ctx, spoke); err != nil {
		t.Fatalf("writing status through v1alpha1: %v", err)
	}
	task := &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns},
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "s", Image: "alpine", Script: "echo hi"}}}}
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatalf("creating a v1alpha1 Task: %v", err)
	}
	got := &v1beta1.TaskRun{}
	get(t, ns, "r", got)
	if got.Spec.Timeout.String() != "10m" || len(got.Spec.Params) != 1 || got.Status.StartTime == nil {
		t.Errorf("after v1alpha1 writes the run is %+v", got)
	}
}

func testOversizedWrites(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := bigTask(ns, "big")
	checkInvalid(t, env.Client.Create(ctx, task),
		`metadata.annotations: Invalid value: read through minitask.dev/v1alpha1, this Task needs 327`,
		"more than the API server's limit of 262144", "spec.description, spec.params, spec.workspaces")

	// Under the limit it is stored; an annotation that takes it over is not.
	task = bigTask(ns, "fits")
	task.Spec.Params = task.Spec.Params[:3]
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatalf("creating a Task whose stash fits: %v", err)
	}
	task.Annotations = map[string]string{"example.com/notes": strings.Repeat("n", 70<<10)}
	checkInvalid(t, env.Client.Update(ctx, task), "this Task needs 26")

	run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"},
			Params: []v1beta1.Param{{Name: "html", Value: strings.Repeat("<", 50<<10)}}}}
	checkInvalid(t, env.Client.Create(ctx, run), "this TaskRun needs 30", "spec.params, spec.timeout")
}

// testBoundHoldsForEscapedText: objects just past the limit in every way
// JSON escaping or UTF-8 inflates text reach the webhook and are refused;
// the match condition's bound would be unsound if any were let through.
func testBoundHoldsForEscapedText(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	// n characters that the stash writes in six bytes each take it just past
	// the limit, though as text they are a sixth of it.
	const n = conversion.MaxAnnotationsBytes / 6
	for name, obj := range map[string]client.Object{
		// \u003c: six bytes in the stash for one character.
		"html in a run's param": &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "html", Namespace: ns},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"},
				Params: []v1beta1.Param{{Name: "a", Value: strings.Repeat("<", n)}}}},
		// A control character: \u0001, six bytes.
		"control characters in a param default": &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "ctl", Namespace: ns},
			Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}},
				Params: []v1beta1.ParamSpec{{Name: "a", Default: ptr.To(strings.Repeat("\x01", n))}}}},
		// Four bytes of UTF-8 per character in an annotation, with a stash.
		"emoji in an annotation": &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "emoji", Namespace: ns,
			Annotations: map[string]string{"a": strings.Repeat("🙂", conversion.MaxAnnotationsBytes/4-20)}},
			Spec: v1beta1.TaskSpec{Description: strings.Repeat("d", 100), Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			checkInvalid(t, env.Client.Create(ctx, obj), "more than the API server's limit of 262144")
		})
	}
}

// testOmittedStash: an object stored past the limit before the rule reads
// through v1alpha1 with the marker, refuses v1alpha1 writes, and takes
// v1beta1 ones.
func testOmittedStash(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := bigTask(ns, "big")
	task.TypeMeta = metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "Task"}
	putInEtcd(t, "tasks", task)

	spoke := &v1alpha1.Task{}
	get(t, ns, "big", spoke)
	if spoke.Annotations[conversion.AnnotationConversionDataOmitted] != "true" {
		t.Fatalf("v1alpha1 annotations %v carry no omission marker", spoke.Annotations)
	}
	spoke.Labels = map[string]string{"touched": "v1alpha1"}
	checkInvalid(t, env.Client.Update(ctx, spoke),
		`metadata.annotations[minitask.dev/conversion-data-omitted]: Forbidden: this Task's spec.description, spec.params, `+
			`spec.workspaces, spec.results and the steps' command, args, workingDir, env, envFrom, computeResources and onError do not fit the annotations of its v1alpha1 form, `+
			`so a v1alpha1 write would lose them; write it through minitask.dev/v1beta1`)

	hub := &v1beta1.Task{}
	get(t, ns, "big", hub)
	hub.Labels = map[string]string{"touched": "v1beta1"}
	if err := env.Client.Update(ctx, hub); err != nil {
		t.Errorf("labelling through v1beta1 an object already past the limit: %v", err)
	}
	if len(hub.Spec.Params) != 5 {
		t.Errorf("the stored Task has %d params, want 5", len(hub.Spec.Params))
	}
}

// testSmallWritesSkipTheWebhook: the match conditions keep ordinary v1beta1
// writes, the controller's status writes among them, away from the guard,
// so that they work while the manager is down (test/e2e's outage test).
func testSmallWritesSkipTheWebhook(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	runsBefore, tasksBefore := webhookRequests(t, stashguard.TaskRunPath), webhookRequests(t, stashguard.TaskPath)

	run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, Params: []v1beta1.Param{{Name: "p", Value: strings.Repeat("v", 30<<10)}}}}
	create(t, run, &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns},
		Spec: v1beta1.TaskSpec{Description: "d", Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}})
	run.Labels = map[string]string{"a": "b"}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
		Reason: string(v1beta1.ReasonPodFailed), Message: strings.Repeat("m", 32<<10), LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	if runs, tasks := webhookRequests(t, stashguard.TaskRunPath), webhookRequests(t, stashguard.TaskPath); runs != runsBefore || tasks != tasksBefore {
		t.Errorf("small v1beta1 writes made %v and %v calls to the guards, want none", runs-runsBefore, tasks-tasksBefore)
	}
	get(t, ns, "r", &v1alpha1.TaskRun{})
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "r", spoke)
	spoke.Labels = map[string]string{"c": "d"}
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatal(err)
	}
	if got := webhookRequests(t, stashguard.TaskRunPath); got <= runsBefore {
		t.Errorf("a v1alpha1 write did not reach the guard")
	}
}

// testStatusCountsForSize: the status conditions a run carries count
// towards its v1alpha1 annotations, so an annotation that takes a run with
// long condition messages past the limit is refused.
func testStatusCountsForSize(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	run := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
	create(t, run)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for _, kind := range []string{"Succeeded", "Ready", "Audited"} {
		run.Status.Conditions = append(run.Status.Conditions, metav1.Condition{Type: kind, Status: metav1.ConditionTrue,
			Reason: "R", Message: strings.Repeat("<", 32<<10), LastTransitionTime: now})
	}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatalf("writing long conditions: %v", err)
	}
	// 3 × 32 KiB × 6 bytes: the stash alone is past the limit, so the run
	// reads without it; adding an annotation to it is no push past the limit.
	run.Annotations = map[string]string{"example.com/a": "b"}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Errorf("annotating a run already past the limit: %v", err)
	}

	fresh := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
	create(t, fresh)
	fresh.Status.Conditions = []metav1.Condition{{Type: "Succeeded", Status: metav1.ConditionTrue,
		Reason: "R", Message: strings.Repeat("<", 32<<10), LastTransitionTime: now}}
	if err := env.Client.Status().Update(ctx, fresh); err != nil {
		t.Fatalf("writing a long condition: %v", err)
	}
	fresh.Annotations = map[string]string{"example.com/notes": strings.Repeat("n", 70<<10)}
	checkInvalid(t, env.Client.Update(ctx, fresh), "this TaskRun needs 26")
}

// bigTask is a Task valid by every CRD limit whose stash (five 64 KiB
// defaults) takes its v1alpha1 annotations past 256 KiB.
func bigTask(ns, name string) *v1beta1.Task {
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		task.Spec.Params = append(task.Spec.Params, v1beta1.ParamSpec{Name: p, Default: ptr.To(strings.Repeat("x", 64<<10))})
	}
	return task
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, name, err)
	}
}

// checkInvalid fails t unless err is an Invalid status saying each of want.
func checkInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want it refused saying %q", want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error is not Invalid: %.2000v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%.3000v", w, err)
		}
	}
}

func durationText(t *testing.T, text string) *v1beta1.Duration {
	t.Helper()
	d := &v1beta1.Duration{}
	if err := json.Unmarshal([]byte(`"`+text+`"`), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// putInEtcd stores obj directly in etcd, past every check of the API
// server, as an earlier release may have.
func putInEtcd(t *testing.T, resource string, obj client.Object) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	env.PutInEtcd(t, resource, obj.GetNamespace(), obj.GetName(), data)
}

// webhookRequests is how many requests the webhook server of this process
// has served at path.
func webhookRequests(t *testing.T, path string) float64 {
	t.Helper()
	return testenv.CounterValue(t, "controller_runtime_webhook_requests_total", map[string]string{"webhook": path})
}
