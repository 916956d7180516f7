package conversion

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// env is the API server the subtests of TestThroughAPIServer share.
var env *testenv.Env

// TestThroughAPIServer proves conversion where it matters: a real
// kube-apiserver calling the webhook for every read and write of the version it
// does not store. It starts the API server itself rather than from TestMain,
// so that this package's unit tests, in the same test binary, need none.
func TestThroughAPIServer(t *testing.T) {
	env = testenv.ForTest(t, SetupWebhooks)
	for name, test := range map[string]func(*testing.T){
		"v1alpha1 objects read back unchanged":             testV1alpha1ObjectsReadBackUnchanged,
		"v1beta1 fields survive a v1alpha1 update":         testKeepsV1beta1FieldsThroughV1alpha1Update,
		"v1alpha1 phase Failed is False/Failed":            testV1alpha1FailedPhaseIsFalseFailed,
		"LIST of 1500 mixed objects in both versions":      testListsManyMixedObjectsInBothVersions,
		"kubectl applies the samples in both versions":     testKubectlAppliesSamplesInBothVersions,
		"kubectl shows short names, category, columns":     testKubectlShowsNamesAndColumns,
		"a malformed stored time fails no LIST":            testMalformedTimeFailsNoList,
		"an oversized stash reads through v1alpha1":        testOversizedStashReadsThroughV1alpha1,
		"re-applying a manifest after a v1alpha1 write":    testReapplyAfterV1alpha1Write,
		"random objects round trip through the API server": testRandomObjectsThroughAPIServer,
		"release 7's objects through every version":        testRelease7ObjectsThroughAPIServer,
		"the largest pinned run through the watch caches":  testLargestPinnedRunThroughWatchCaches,
		"hostile objects among random ones":                testHostileObjectsThroughAPIServer,
		"a v1alpha1 step edit keeps the step's additions":  testStepEditsThroughV1alpha1,
		"results, retries and attempts through v1alpha1":   testRunSemanticsThroughV1alpha1,
		"an object over the stream bound, both ways":       testObjectOverTheStreamBoundThroughAPIServer,
	} {
		t.Run(name, test)
	}
}

// now is a whole second, as the API server stores times.
func now() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

func testV1alpha1ObjectsReadBackUnchanged(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := &v1alpha1.Task{
		ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: ns, Labels: map[string]string{"team": "a"}},
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{
			{Name: "compile", Image: "golang:1", Script: "go build ./..."},
			{Name: "entrypoint", Image: "alpine:3"},
		}},
	}
	run := &v1alpha1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "build-1", Namespace: ns, Annotations: map[string]string{"note": "x"}},
		Spec:       v1alpha1.TaskRunSpec{TaskRef: "build"},
	}
	mustCreate(t, task, run)
	start := now()
	run.Status = v1alpha1.TaskRunStatus{Phase: v1alpha1.TaskRunPhaseRunning, PodName: "build-1-pod", StartTime: &start}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatalf("writing v1alpha1 status: %v", err)
	}

	hubTask := &v1beta1.Task{}
	mustGet(t, client.ObjectKeyFromObject(task), hubTask)
	if diff := cmp.Diff([]v1beta1.Step{
		{Name: "compile", Image: "golang:1", Script: "go build ./..."},
		{Name: "entrypoint", Image: "alpine:3"},
	}, hubTask.Spec.Steps); diff != "" {
		t.Errorf("v1beta1 Task steps (-want +got):\n%s", diff)
	}
	hubRun := &v1beta1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), hubRun)
	if hubRun.Spec.TaskRef.Name != "build" || hubRun.Status.PodName != "build-1-pod" || !hubRun.Status.StartTime.Equal(&start) {
		t.Errorf("v1beta1 TaskRun lost mapped fields: spec=%+v status=%+v", hubRun.Spec, hubRun.Status)
	}
	wantCond := []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionUnknown,
		Reason: string(v1beta1.ReasonRunning), LastTransitionTime: start}}
	if diff := cmp.Diff(wantCond, hubRun.Status.Conditions); diff != "" {
		t.Errorf("v1beta1 condition derived from phase Running (-want +got):\n%s", diff)
	}
	assertNoConversionAnnotation(t, hubTask, hubRun)

	gotTask, gotRun := &v1alpha1.Task{}, &v1alpha1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(task), gotTask)
	mustGet(t, client.ObjectKeyFromObject(run), gotRun)
	if diff := cmp.Diff(task.Spec, gotTask.Spec); diff != "" {
		t.Errorf("v1alpha1 Task spec changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(run.Spec, gotRun.Spec); diff != "" {
		t.Errorf("v1alpha1 TaskRun spec changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(run.Status, gotRun.Status); diff != "" {
		t.Errorf("v1alpha1 TaskRun status changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(run.Annotations, gotRun.Annotations); diff != "" {
		t.Errorf("v1alpha1 TaskRun annotations changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(task.Labels, gotTask.Labels); diff != "" {
		t.Errorf("v1alpha1 Task labels changed (-want +got):\n%s", diff)
	}
}

func testKeepsV1beta1FieldsThroughV1alpha1Update(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	run := &v1beta1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "greet-1", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{
			TaskRef: v1beta1.TaskRef{Name: "greet"},
			Params:  []v1beta1.Param{{Name: "greeting", Value: "hi"}, {Name: "name", Value: "world"}},
			Timeout: v1beta1.NewDuration(90 * time.Minute),
			Status:  v1beta1.TaskRunSpecStatusCancelled,
		},
	}
	mustCreate(t, run)
	want := run.Spec.DeepCopy()

	spoke := &v1alpha1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), spoke)
	if spoke.Spec.TaskRef != "greet" {
		t.Errorf("v1alpha1 taskRef = %q, want greet", spoke.Spec.TaskRef)
	}
	if _, ok := spoke.Annotations[AnnotationConversionData]; !ok {
		t.Fatalf("v1alpha1 view has no %s annotation; annotations: %v", AnnotationConversionData, spoke.Annotations)
	}

	if spoke.Labels == nil {
		spoke.Labels = map[string]string{}
	}
	spoke.Labels["touched-by"] = "v1alpha1-client"
	if err := env.Client.Update(ctx, spoke); err != nil {
		t.Fatalf("updating through v1alpha1: %v", err)
	}

	got := &v1beta1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), got)
	if diff := cmp.Diff(*want, got.Spec); diff != "" {
		t.Errorf("v1beta1 spec after a v1alpha1 update (-want +got):\n%s", diff)
	}
	if got.Labels["touched-by"] != "v1alpha1-client" {
		t.Errorf("the v1alpha1 client's label was lost: %v", got.Labels)
	}
	assertNoConversionAnnotation(t, got)
}

func testV1alpha1FailedPhaseIsFalseFailed(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	run := &v1beta1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec:       v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}},
	}
	mustCreate(t, run)
	start := now()
	run.Status = v1beta1.TaskRunStatus{
		StartTime: &start,
		Conditions: []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionUnknown,
			Reason: string(v1beta1.ReasonRunning), Message: "step build is running", LastTransitionTime: start}},
	}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatalf("writing v1beta1 status: %v", err)
	}

	spoke := &v1alpha1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), spoke)
	finish := metav1.NewTime(start.Add(time.Second))
	spoke.Status.Phase = v1alpha1.TaskRunPhaseFailed
	spoke.Status.FinishTime = &finish
	if err := env.Client.Status().Update(ctx, spoke); err != nil {
		t.Fatalf("writing v1alpha1 status: %v", err)
	}

	got := &v1beta1.TaskRun{}
	mustGet(t, client.ObjectKeyFromObject(run), got)
	want := []metav1.Condition{{Type: v1beta1.ConditionSucceeded, Status: metav1.ConditionFalse,
		Reason: string(v1beta1.ReasonFailed), LastTransitionTime: finish}}
	if diff := cmp.Diff(want, got.Status.Conditions); diff != "" {
		t.Errorf("condition after a v1alpha1 writer set phase Failed (-want +got):\n%s", diff)
	}
	if got.Status.CompletionTime == nil || !got.Status.CompletionTime.Equal(&finish) {
		t.Errorf("completionTime = %v, want %v", got.Status.CompletionTime, finish)
	}
}

func testListsManyMixedObjectsInBothVersions(t *testing.T) {
	const n = 1500
	ctx := context.Background()
	ns := env.Namespace(t)
	// Half are written through each version, so the list converts both ways.
	create := func(i int) client.Object {
		name := fmt.Sprintf("run-%04d", i)
		if i%2 == 0 {
			return &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
		}
		return &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"},
				Params: []v1beta1.Param{{Name: "p", Value: "v"}}}}
	}
	parallel(t, n, 16, func(i int) error { return env.Client.Create(ctx, create(i)) })

	alpha := &v1alpha1.TaskRunList{}
	if err := env.Client.List(ctx, alpha, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing v1alpha1: %v", err)
	}
	beta := &v1beta1.TaskRunList{}
	if err := env.Client.List(ctx, beta, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing v1beta1: %v", err)
	}
	if len(alpha.Items) != n || len(beta.Items) != n {
		t.Fatalf("listed %d v1alpha1 and %d v1beta1 runs, want %d of each", len(alpha.Items), len(beta.Items), n)
	}
	for _, r := range beta.Items {
		odd := r.Name[len(r.Name)-1]%2 == 1
		if odd != (len(r.Spec.Params) == 1) {
			t.Fatalf("v1beta1 %s has params %v; the listing lost or invented them", r.Name, r.Spec.Params)
		}
	}
}

func testKubectlAppliesSamplesInBothVersions(t *testing.T) {
	ns := env.Namespace(t)
	out, stderr, err := env.RunKubectl("apply", "-n", ns, "-f", env.RepoRoot+"/config/samples/")
	if err != nil {
		t.Fatalf("kubectl apply -f config/samples/: %v\n%s%s", err, out, stderr)
	}
	want := sets.New[string]()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, ok := strings.CutPrefix(line, "taskrun.minitask.dev/"); ok {
			want.Insert(strings.Fields(name)[0])
		}
	}
	if want.Len() < 2 {
		t.Fatalf("kubectl apply created fewer than 2 TaskRuns:\n%s", out)
	}
	for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
		out, stderr, err := env.RunKubectl("get", "taskruns."+version+".minitask.dev", "-n", ns, "-o", "name")
		if err != nil {
			t.Fatalf("kubectl get taskruns.%s: %v\n%s%s", version, err, out, stderr)
		}
		// From release 6, v1alpha1 and v1beta1 are served deprecated, each
		// with a warning that names v1, the version to move to.
		warning := ""
		if version != "v1" {
			warning = "Warning: minitask.dev/" + version + " TaskRun is deprecated; use minitask.dev/v1 TaskRun\n"
		}
		if stderr != warning {
			t.Errorf("kubectl get taskruns.%s warned %q; want %q", version, stderr, warning)
		}
		got := sets.New[string]()
		for _, line := range strings.Fields(out) {
			got.Insert(strings.TrimPrefix(line, "taskrun.minitask.dev/"))
		}
		if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
			t.Errorf("kubectl get taskruns.%s.minitask.dev (-want +got):\n%s", version, diff)
		}
	}
}

// testKubectlShowsNamesAndColumns pins what API.md promises kubectl users:
// short names, the minitask category and each version's printer columns.
func testKubectlShowsNamesAndColumns(t *testing.T) {
	ns := env.Namespace(t)
	if out, stderr, err := env.RunKubectl("apply", "-n", ns, "-f", env.RepoRoot+"/config/samples/"); err != nil {
		t.Fatalf("kubectl apply -f config/samples/: %v\n%s%s", err, out, stderr)
	}
	headers := map[string][]string{
		"tr":                             {"NAME", "TASK", "SUCCEEDED", "REASON", "STARTTIME", "COMPLETIONTIME", "AGE"},
		"taskruns.v1alpha1.minitask.dev": {"NAME", "TASK", "PHASE", "AGE"},
	}
	for resource, want := range headers {
		out, stderr, err := env.RunKubectl("get", resource, "-n", ns)
		if err != nil {
			t.Fatalf("kubectl get %s: %v\n%s", resource, err, stderr)
		}
		if diff := cmp.Diff(want, strings.Fields(strings.SplitN(out, "\n", 2)[0])); diff != "" {
			t.Errorf("kubectl get %s columns (-want +got):\n%s", resource, diff)
		}
	}
	out, stderr, err := env.RunKubectl("get", "minitask", "-n", ns, "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get minitask: %v\n%s", err, stderr)
	}
	for _, want := range []string{"task.minitask.dev/greet", "taskrun.minitask.dev/greet-run"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get minitask does not list %s:\n%s", want, out)
		}
	}
	if out, stderr, err := env.RunKubectl("get", "tsk", "greet", "-n", ns, "-o", "name"); err != nil || strings.TrimSpace(out) != "task.minitask.dev/greet" {
		t.Errorf("kubectl get tsk greet = %q, %v %s; want the Task by its short name", out, err, stderr)
	}
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func mustGet(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, key, err)
	}
}

func assertNoConversionAnnotation(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[AnnotationConversionData]; ok {
			t.Errorf("v1beta1 %T %s carries the %s annotation", o, o.GetName(), AnnotationConversionData)
		}
	}
}

// parallel runs fn(0..n-1) on workers goroutines and fails on the first error.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func sorted(s sets.Set[string]) []string {
	l := s.UnsortedList()
	sort.Strings(l)
	return l
}
