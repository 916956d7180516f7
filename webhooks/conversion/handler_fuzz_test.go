package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

const (
	alphaVersion = "minitask.dev/v1alpha1"
	betaVersion  = "minitask.dev/v1beta1"
	v1Version    = "minitask.dev/v1"
)

// handlerOutcome is how the conversion handler answered a request body.
type handlerOutcome string

const (
	rejected  handlerOutcome = "HTTP 400"
	failed    handlerOutcome = "Failure"
	converted handlerOutcome = "Success"
)

// FuzzConversionHandler feeds arbitrary request bodies to the conversion
// handler the manager serves (NewHandler), wired with the converters
// webhooks.SetupWithManager registers. It must never panic; a malformed
// review gets HTTP 400 or a Failure with a message; and a review of what the
// API server could have stored (Tasks and TaskRuns of the other version,
// whatever their content: malformed times, oversized fields, forged
// annotations) always succeeds, with one object out per object in: each
// converted, or passed through as it came with only its apiVersion changed.
//
// Wherever controller-runtime's handler (the --conversion-handler fallback)
// converts a review, the handler must answer with the same objects
// (checkAnswersAsControllerRuntime). Streamed, as it streams a large
// review, it must answer as it does read whole (checkStreamsAsWhole).
func FuzzConversionHandler(f *testing.F) {
	scheme := newTestScheme(f)
	handler := newConversionHandler(f, scheme)
	fallback := newControllerRuntimeHandler(f, scheme)
	streaming := newStreamingHandler(f, scheme)

	for _, seed := range handlerSeeds(f, scheme) {
		if got := checkHandler(f, scheme, handler, seed.body); got != seed.want {
			f.Errorf("seed %q: handler answered %s, want %s", seed.name, got, seed.want)
		}
		f.Add(seed.body)
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		checkHandler(t, scheme, handler, body)
		checkAnswersAsControllerRuntime(t, handler, fallback, body)
		checkStreamsAsWhole(t, handler, streaming, body)
	})
}

type handlerSeed struct {
	name string
	body []byte
	want handlerOutcome
}

func handlerSeeds(tb testing.TB, scheme *runtime.Scheme) []handlerSeed {
	hubTaskLosingFields := hubTask().Description("Says hi").Obj()
	stashedTask := spokeTask().Annotation(stashed(`{"spec":{"description":"Says hi"}}`)).Obj()
	waitingRun := hubRun().Timeout(0).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask, created)).Obj()
	garbageAnnotatedRun := spokeRun().Phase(v1alpha1.TaskRunPhaseRunning).Annotation(AnnotationConversionData, "{").Obj()
	phaseOutsideEnum := spokeRun().Phase("Exploded").Obj()
	finishedJSON := mustJSON(tb, typed(tb, scheme, finishedRun(1)))

	return []handlerSeed{
		{"Task to v1alpha1", review(tb, scheme, alphaVersion, hubTaskLosingFields), converted},
		{"Task to v1beta1", review(tb, scheme, betaVersion, stashedTask), converted},
		{"TaskRun to v1alpha1", review(tb, scheme, alphaVersion, waitingRun, hubRun().Obj()), converted},
		{"TaskRuns to v1beta1, one with a garbage annotation, one with a phase outside the enum",
			review(tb, scheme, betaVersion, garbageAnnotatedRun, phaseOutsideEnum, spokeRun().Obj()), converted},
		{"both kinds in one review", review(tb, scheme, alphaVersion, hubTask().Obj(), hubRun().Obj()), converted},
		{"no objects", review(tb, scheme, betaVersion), converted},
		// Release 7's fields, which release 6 keeps: from v1 to each spoke,
		// and back from a spoke's stash.
		{"a v1 run with a taskSpec, pinned, with sidecars, to v1alpha1", review(tb, scheme, alphaVersion, release7Run()), converted},
		{"a v1 run with a taskSpec, pinned, with sidecars, to v1beta1", review(tb, scheme, betaVersion, release7Run()), converted},
		{"a v1alpha1 run whose stash holds a taskSpec, to v1", review(tb, scheme, v1Version, spokeRun().TaskRef(InlineTaskRef).Annotation(AnnotationConversionData,
			`{"v1":{"spec":{"taskSpec":{"steps":[{"name":"s","image":"i","timeout":"10m"}],"sidecars":[{"name":"db","image":"postgres"}]}},"status":{"sidecars":[{"name":"db","ready":true}]}}}`).Obj()), converted},
		// What the API server may hold although no typed decode takes it:
		// passed through, the rest of the review converted.
		{"a TaskRun with lower-case times among good ones",
			rawReview(alphaVersion, finishedJSON, lowercaseTimes(finishedJSON), mustJSON(tb, typed(tb, scheme, hubRun().Obj()))), converted},
		{"a v1alpha1 TaskRun with lower-case times",
			rawReview(betaVersion, lowercaseTimes(mustJSON(tb, typed(tb, scheme,
				spokeRun().Phase(v1alpha1.TaskRunPhaseSucceeded).Started(started).Finished(finished).Obj())))), converted},
		{"object of a wrong shape", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Task","spec":5}`), converted},
		{"object whose metadata is no object", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Task","metadata":[]}`), converted},
		// Oversized: the v1alpha1 form carries the omission marker instead.
		{"a Task whose stash would pass 256 KiB", review(tb, scheme, alphaVersion, oversizedHubTask()), converted},
		{"a TaskRun whose stash would pass 256 KiB", review(tb, scheme, alphaVersion, oversizedHubRun()), converted},
		// Forged: conversion takes the annotation as it is; admission judges it.
		{"a v1alpha1 TaskRun with a forged annotation", review(tb, scheme, betaVersion, forgedSpokeRun()), converted},
		{"a v1alpha1 Task with the omission marker", review(tb, scheme, betaVersion,
			spokeTask().Annotation(AnnotationConversionDataOmitted, "true").Obj()), converted},
		// Release 3's fields, both ways; a stash with a quantity that is none.
		{"a Task with step additions and a workspace to v1alpha1", review(tb, scheme, alphaVersion,
			hubTask().Steps(buildStepWithAdditions, testStepWithEnv).Workspace("source").Obj()), converted},
		{"a v1alpha1 Task whose stash holds step additions by name", review(tb, scheme, betaVersion,
			spokeTask().Annotation(stashed(`{"spec":{"steps":[`+buildStepStash+`,`+testStepStash+`]}}`)).Obj()), converted},
		{"a v1alpha1 Task whose stash holds a quantity that is none", review(tb, scheme, betaVersion,
			spokeTask().Annotation(stashed(`{"spec":{"steps":[{"name":"build","computeResources":{"limits":{"cpu":"lots"}}}]}}`)).Obj()), converted},
		{"a TaskRun with workspaces, a ServiceAccount and a Pod template to v1alpha1", review(tb, scheme, alphaVersion,
			hubRun().ServiceAccount("builder").PodTemplate(v1beta1.PodTemplate{PriorityClassName: "batch"}).
				Workspace(v1beta1.WorkspaceBinding{Name: "w", EmptyDir: &corev1.EmptyDirVolumeSource{}}).Obj()), converted},
		// v1, the hub since release 5: typed params and timeouts.pending to
		// each spoke, and back from each, their stashes forged too.
		{"v1alpha1 and v1beta1 objects to v1", review(tb, scheme, v1Version, hubTask().Obj(), spokeRun().Obj(), stashedTask), converted},
		{"a v1 Task with typed params to v1alpha1", review(tb, scheme, alphaVersion, typedV1Task()), converted},
		{"a v1 Task with typed params to v1beta1", review(tb, scheme, betaVersion, typedV1Task()), converted},
		{"a v1 TaskRun with typed values and a pending timeout to v1beta1", review(tb, scheme, betaVersion, typedV1Run()), converted},
		{"a v1beta1 Task whose stash types text that is none", rawReview(v1Version,
			`{"apiVersion":"minitask.dev/v1beta1","kind":"Task","metadata":{"annotations":{"minitask.dev/conversion-data":"{\"v1\":{\"spec\":{\"params\":[{\"name\":\"f\",\"type\":\"array\"}]}}}"}},"spec":{"params":[{"name":"f","default":"[1,"}],"steps":[{"name":"s","image":"i"}]}}`), converted},
		// Issue 15's fields, both ways; a stash whose attempt time is no time.
		{"a Task with results and an onError step to v1alpha1", review(tb, scheme, alphaVersion,
			withResults(hubTask().Steps(v1beta1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run",
				OnError: v1beta1.OnErrorContinue}).Obj(), digestResult)), converted},
		{"a Retrying TaskRun with retries 0, a TTL, results and attempts to v1alpha1", review(tb, scheme, alphaVersion,
			withOutcome(withRunSemantics(hubRun().Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonRetrying, finished)).Obj(),
				ptr.To[int32](0), []v1beta1.RetryReason{v1beta1.RetryOnPodFailed}, ptr.To[int32](0)),
				[]v1beta1.RunResult{{Name: "digest", Value: ptr.To("")}}, evicted)), converted},
		{"a v1alpha1 TaskRun whose stash holds results and attempts", review(tb, scheme, betaVersion,
			spokeRun().Phase(v1alpha1.TaskRunPhaseFailed).Annotation(stashed(`{"spec":{"retries":2,"ttlSecondsAfterFinished":0},`+
				`"status":{"results":[{"name":"digest","value":""}],"attempts":[`+evictedStash+`]}}`)).Obj()), converted},
		{"a v1alpha1 TaskRun whose stash holds an attempt time that is none", review(tb, scheme, betaVersion,
			spokeRun().Annotation(stashed(`{"status":{"attempts":[{"podName":"p","reason":"PodFailed","startTime":"2024-05-01t10:00:00z"}]}}`)).Obj()), converted},
		// A name given twice means its last value, to encoding/json and to
		// the API server, whatever came first.
		{"an object naming its apiVersion twice, the first no version", rawReview(betaVersion,
			`{"kind":"Task","apiVersion":"0","apiVersion":"minitask.dev/v1alpha1"}`), converted},
		{"an object naming its kind twice, the first no kind", rawReview(betaVersion,
			`{"apiVersion":"minitask.dev/v1alpha1","kind":"Pipeline","kind":"TaskRun","spec":{"taskRef":"t"}}`), converted},
		{"an object naming its apiVersion twice, the last of another group", rawReview(betaVersion,
			`{"kind":"Task","apiVersion":"minitask.dev/v1alpha1","apiVersion":"v1"}`), failed},
		// What a review streamed must take in any order, and what it may
		// fail for once its answer has begun.
		{"objects before desiredAPIVersion and uid", []byte(`{"request":{"objects":[` + finishedJSON +
			`],"desiredAPIVersion":"minitask.dev/v1alpha1","uid":"1"},"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1"}`), converted},
		{"uid after the objects", []byte(`{"request":{"desiredAPIVersion":"minitask.dev/v1alpha1","objects":[` + finishedJSON +
			`],"uid":"1"}}`), converted},
		{"desiredAPIVersion again after the objects, the first no version", []byte(`{"request":{"uid":"1","desiredAPIVersion":"0",` +
			`"objects":[` + finishedJSON + `],"DesiredAPIVersion":"minitask.dev/v1alpha1"}}`), converted},
		{"objects given twice", []byte(`{"request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":[` + finishedJSON +
			`,{"kind":"Pipeline"}],"objects":[` + finishedJSON + `]}}`), converted},
		{"request null after the objects", []byte(`{"request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":[` +
			finishedJSON + `]},"request":null}`), rejected},
		{"truncated after an object", []byte(`{"request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":[` +
			finishedJSON + `,`), rejected},
		{"empty body", nil, rejected},
		{"truncated JSON", []byte(`{"request":{"uid":`), rejected},
		{"JSON null", []byte(`null`), rejected},
		{"no request", []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), rejected},
		{"objects not a list", []byte(`{"request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":{}}}`), rejected},
		{"object without apiVersion", rawReview(alphaVersion, `{"kind":"Task"}`), failed},
		{"object of an unknown kind", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Pipeline"}`), failed},
		{"object of another group", rawReview(alphaVersion, `{"apiVersion":"v1","kind":"ConfigMap"}`), failed},
		{"a list", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskList","items":[]}`), failed},
		{"object JSON null", rawReview(alphaVersion, `null`), failed},
		{"object not a JSON object", rawReview(alphaVersion, `"Task"`), failed},
		{"apiVersion key in the wrong case", rawReview(alphaVersion, `{"ApiVersion":"minitask.dev/v1beta1","kind":"Task"}`), failed},
		{"unknown desired version", rawReview("minitask.dev/v2", `{"apiVersion":"minitask.dev/v1beta1","kind":"Task"}`), failed},
		{"unknown version of an object", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v2","kind":"Task"}`), failed},
		{"to its own version", rawReview(betaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun"}`), failed},
	}
}

// checkHandler posts body to handler, checks the invariants every answer
// keeps, and returns how the handler answered.
func checkHandler(tb testing.TB, scheme *runtime.Scheme, handler http.Handler, body []byte) handlerOutcome {
	tb.Helper()
	recorder := newRecorder()
	handler.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body)))

	// The handler reads the review just so: the first JSON value of the body.
	var request apix.ConversionReview
	requestErr := json.NewDecoder(bytes.NewReader(body)).Decode(&request)
	if requestErr != nil || request.Request == nil {
		if recorder.Code != http.StatusBadRequest {
			tb.Fatalf("a body that is no conversion review got HTTP %d, want 400: %q", recorder.Code, body)
		}
		return rejected
	}
	if recorder.Code != http.StatusOK {
		tb.Fatalf("a conversion review got HTTP %d, want 200: %q", recorder.Code, body)
	}

	var answer apix.ConversionReview
	if err := json.Unmarshal(recorder.Body.Bytes(), &answer); err != nil || answer.Response == nil {
		tb.Fatalf("unreadable answer (%v): %s", err, recorder.Body.Bytes())
	}
	response := answer.Response
	if response.UID != request.Request.UID {
		tb.Errorf("answer UID %q, want the request's %q", response.UID, request.Request.UID)
	}
	switch response.Result.Status {
	case metav1.StatusFailure:
		if response.Result.Message == "" || response.Result.Message == panicMessage {
			tb.Fatalf("conversion failed with message %q: %q", response.Result.Message, body)
		}
		if storable(request.Request) {
			tb.Fatalf("conversion of what the API server may store failed: %s\nrequest: %.2000q", response.Result.Message, body)
		}
		return failed
	case metav1.StatusSuccess:
		checkConverted(tb, scheme, request.Request, response.ConvertedObjects)
		return converted
	default:
		tb.Fatalf("answer status %q, want Success or Failure", response.Result.Status)
		return ""
	}
}

// checkConverted checks that each object came back once, in the version
// asked for: converted when its typed decode takes it, with no conversion
// annotation on a v1 object, none but the stash's v1 member on a v1beta1
// one, and annotations the API server accepts;
// else passed through as it came but for its apiVersion.
func checkConverted(tb testing.TB, scheme *runtime.Scheme, request *apix.ConversionRequest, objects []runtime.RawExtension) {
	tb.Helper()
	if len(objects) != len(request.Objects) {
		tb.Fatalf("%d objects converted, want %d", len(objects), len(request.Objects))
	}
	for i, object := range objects {
		var got struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
		}
		if !decodes(scheme, request.Objects[i].Raw) {
			checkPassedThrough(tb, i, request.Objects[i].Raw, object.Raw, request.DesiredAPIVersion)
			continue
		}
		if err := json.Unmarshal(object.Raw, &got); err != nil {
			tb.Fatalf("converted object %d unreadable: %v", i, err)
		}
		if got.APIVersion != request.DesiredAPIVersion {
			tb.Errorf("converted object %d has apiVersion %q, want %q", i, got.APIVersion, request.DesiredAPIVersion)
		}
		stash, stashed := got.Annotations[AnnotationConversionData]
		_, omitted := got.Annotations[AnnotationConversionDataOmitted]
		if (stashed || omitted) && got.APIVersion == v1Version {
			tb.Errorf("converted v1 object %d carries a conversion annotation", i)
		}
		if got.APIVersion == betaVersion && (omitted || stashed && !onlyV1Member(stash)) {
			tb.Errorf("converted v1beta1 object %d carries a conversion annotation other than the stash's v1 member: %v", i, got.Annotations)
		}
		if stashed && omitted {
			tb.Errorf("converted object %d carries both the stash and the omission marker", i)
		}
		if size := annotationsBytes(got.Annotations); size > MaxAnnotationsBytes && fitsLimit(request.Objects[i].Raw) {
			tb.Errorf("converted object %d has %d bytes of annotations, over the API server's %d", i, size, MaxAnnotationsBytes)
		}
	}
}

// checkPassedThrough checks that out is in, as JSON values, but for its
// apiVersion, which is desired.
func checkPassedThrough(tb testing.TB, i int, in, out []byte, desired string) {
	tb.Helper()
	var want, got map[string]any
	if err := json.Unmarshal(in, &want); err != nil {
		tb.Fatalf("object %d passed through is no JSON object: %v", i, err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		tb.Fatalf("object %d passed through is unreadable: %v", i, err)
	}
	want["apiVersion"] = desired
	if diff := cmp.Diff(want, got); diff != "" {
		tb.Errorf("object %d passed through changed (-want +got):\n%s", i, diff)
	}
}

// storable reports whether request is one the API server could send for
// objects it stored: the desired version is one of ours, and every object
// is a Task or TaskRun (by its apiVersion and kind, whatever the rest holds)
// of the other version. The contract says conversion answers every such
// review.
func storable(request *apix.ConversionRequest) bool {
	if request.DesiredAPIVersion != alphaVersion && request.DesiredAPIVersion != betaVersion {
		return false
	}
	for _, raw := range request.Objects {
		header, err := decodeHeader(raw.Raw)
		if err != nil || header.APIVersion == request.DesiredAPIVersion ||
			(header.APIVersion != alphaVersion && header.APIVersion != betaVersion) ||
			(header.Kind != "Task" && header.Kind != "TaskRun") {
			return false
		}
		if _, err := withAPIVersion(raw.Raw, request.DesiredAPIVersion); err != nil {
			return false
		}
	}
	return true
}

// decodes reports whether raw decodes as the typed object its apiVersion and
// kind name: what the handler converts rather than passes through.
func decodes(scheme *runtime.Scheme, raw []byte) bool {
	header, err := decodeHeader(raw)
	if err != nil {
		return false
	}
	obj, err := scheme.New(schema.FromAPIVersionAndKind(header.APIVersion, header.Kind))
	return err == nil && decodeObject(raw, obj) == nil
}

// fitsLimit reports whether raw's own annotations are within the API
// server's limit, as every stored object's are.
func fitsLimit(raw []byte) bool {
	var meta struct {
		metav1.ObjectMeta `json:"metadata"`
	}
	return json.Unmarshal(raw, &meta) == nil && annotationsBytes(meta.Annotations) <= MaxAnnotationsBytes
}

func newTestScheme(tb testing.TB) *runtime.Scheme {
	tb.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	return scheme
}

// newConversionHandler is the handler the manager serves (NewHandler), with
// the converters webhooks.SetupWithManager registers, built by the same
// constructors.
func newConversionHandler(tb testing.TB, scheme *runtime.Scheme) http.Handler {
	tb.Helper()
	return NewHandler(scheme, newTestRegistry(tb, scheme))
}

// newTestRegistry is a converter registry as webhooks.SetupWithManager's
// builders fill the manager's.
func newTestRegistry(tb testing.TB, scheme *runtime.Scheme) crconversion.Registry {
	tb.Helper()
	registry := crconversion.NewRegistry()
	for _, c := range []struct {
		hub          runtime.Object
		newConverter func(*runtime.Scheme) (crconversion.Converter, error)
	}{{&v1beta1.Task{}, NewTaskConverter}, {&v1beta1.TaskRun{}, NewTaskRunConverter}} {
		converter, err := c.newConverter(scheme)
		if err != nil {
			tb.Fatalf("building the converter of %T: %v", c.hub, err)
		}
		gvk, err := apiutil.GVKForObject(c.hub, scheme)
		if err != nil {
			tb.Fatal(err)
		}
		if err := registry.RegisterConverter(gvk.GroupKind(), converter); err != nil {
			tb.Fatal(err)
		}
	}
	return registry
}

// review is a ConversionReview asking for objects in the desired version.
func review(tb testing.TB, scheme *runtime.Scheme, desired string, objects ...runtime.Object) []byte {
	tb.Helper()
	var raws []string
	for _, object := range objects {
		raws = append(raws, mustJSON(tb, typed(tb, scheme, object)))
	}
	return rawReview(desired, raws...)
}

// typed sets object's apiVersion and kind from scheme, as the API server
// sends them, and returns it.
func typed(tb testing.TB, scheme *runtime.Scheme, object runtime.Object) runtime.Object {
	tb.Helper()
	gvk, err := apiutil.GVKForObject(object, scheme)
	if err != nil {
		tb.Fatal(err)
	}
	object.GetObjectKind().SetGroupVersionKind(gvk)
	return object
}

// rawReview is a ConversionReview of the given objects' JSON.
func rawReview(desired string, objects ...string) []byte {
	request := &apix.ConversionRequest{UID: "0f6a3d52", DesiredAPIVersion: desired, Objects: []runtime.RawExtension{}}
	for _, object := range objects {
		request.Objects = append(request.Objects, runtime.RawExtension{Raw: []byte(object)})
	}
	data, err := json.Marshal(apix.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  request,
	})
	if err != nil {
		panic(err)
	}
	return data
}

// typedV1Task is a v1 Task with a param of each type.
func typedV1Task() *v1.Task {
	return &v1.Task{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "ns"}, Spec: v1.TaskSpec{
		Params: []v1.ParamSpec{
			{Name: "files", Type: v1.ParamTypeArray, Default: v1.NewArrayValue("a.go", "b.go")},
			{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}},
				Default: v1.NewObjectValue(map[string]string{"repo": "example.org/app", "tag": "latest"})},
			{Name: "greeting", Default: v1.NewStringValue("hi")},
		},
		Steps: []v1.Step{{Name: "lint", Image: "golang:1.26", Command: []string{"gofmt", "-l"}, Args: []string{"$(params.files[*])"}}}}}
}

// typedV1Run is a v1 TaskRun with typed values and both timeouts.
func typedV1Run() *v1.TaskRun {
	return &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "typed-run", Namespace: "ns"}, Spec: v1.TaskRunSpec{
		TaskRef:  v1.TaskRef{Name: "typed"},
		Params:   []v1.Param{{Name: "files", Value: *v1.NewArrayValue("main.go")}, {Name: "image", Value: *v1.NewObjectValue(map[string]string{"repo": "r", "tag": "t"})}},
		Timeouts: v1.Timeouts{Total: v1.NewDuration(time.Hour), Pending: v1.NewDuration(10 * time.Minute)}}}
}

// onlyV1Member reports whether stash is a JSON object of one member, v1:
// all a v1beta1 object's stash may hold.
func onlyV1Member(stash string) bool {
	var members map[string]json.RawMessage
	return json.Unmarshal([]byte(stash), &members) == nil && len(members) == 1 && members["v1"] != nil
}

// release7Run is a v1 run with release 7's fields: an inline taskSpec with a
// step timeout and a sidecar, pinned, and its sidecar's state.
func release7Run() *v1.TaskRun {
	spec := &v1.TaskSpec{
		Steps:    []v1.Step{{Name: "build", Image: "alpine", Script: "true", Timeout: v1.NewDuration(10 * time.Minute), ImagePullPolicy: v1.PullAlways}},
		Sidecars: []v1.Sidecar{{Name: "db", Image: "postgres:17"}},
	}
	return &v1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "inline", Namespace: "ns"},
		Spec:       v1.TaskRunSpec{TaskSpec: spec},
		Status:     v1.TaskRunStatus{TaskSpec: spec.DeepCopy(), Sidecars: []v1.SidecarState{{Name: "db", State: v1.StepRunning}}},
	}
}
