package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

const (
	alphaVersion = "minitask.dev/v1alpha1"
	betaVersion  = "minitask.dev/v1beta1"
	// panicMessage is what controller-runtime answers when a converter panics.
	panicMessage = "internal error occurred during conversion"
)

// handlerOutcome is how the conversion handler answered a request body.
type handlerOutcome string

const (
	rejected  handlerOutcome = "HTTP 400"
	failed    handlerOutcome = "Failure"
	converted handlerOutcome = "Success"
)

// FuzzConversionHandler feeds arbitrary request bodies to the real conversion
// handler, wired with the converters webhooks.SetupWithManager registers. It must never
// panic; a malformed review gets HTTP 400 or a Failure with a message; and a
// review whose objects all decode as Tasks or TaskRuns of the other version
// always converts, with one object out per object in.
func FuzzConversionHandler(f *testing.F) {
	scheme := newTestScheme(f)
	handler := newConversionHandler(f, scheme)

	for _, seed := range handlerSeeds(f, scheme) {
		if got := checkHandler(f, scheme, handler, seed.body); got != seed.want {
			f.Errorf("seed %q: handler answered %s, want %s", seed.name, got, seed.want)
		}
		f.Add(seed.body)
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		checkHandler(t, scheme, handler, body)
	})
}

type handlerSeed struct {
	name string
	body []byte
	want handlerOutcome
}

func handlerSeeds(tb testing.TB, scheme *runtime.Scheme) []handlerSeed {
	hubTaskLosingFields := hubTask().Description("Says hi").Obj()
	stashedTask := spokeTask().Stash(`{"spec":{"description":"Says hi"}}`).Obj()
	waitingRun := hubRun().Timeout(0).Conditions(succeeded(metav1.ConditionUnknown, v1beta1.ReasonWaitingForTask, created)).Obj()
	garbageAnnotatedRun := spokeRun().Phase(v1alpha1.TaskRunPhaseRunning).Annotation(AnnotationConversionData, "{").Obj()
	phaseOutsideEnum := spokeRun().Phase("Exploded").Obj()

	return []handlerSeed{
		{"Task to v1alpha1", review(tb, scheme, alphaVersion, hubTaskLosingFields), converted},
		{"Task to v1beta1", review(tb, scheme, betaVersion, stashedTask), converted},
		{"TaskRun to v1alpha1", review(tb, scheme, alphaVersion, waitingRun, hubRun().Obj()), converted},
		{"TaskRuns to v1beta1, one with a garbage annotation, one with a phase outside the enum",
			review(tb, scheme, betaVersion, garbageAnnotatedRun, phaseOutsideEnum, spokeRun().Obj()), converted},
		{"both kinds in one review", review(tb, scheme, alphaVersion, hubTask().Obj(), hubRun().Obj()), converted},
		{"no objects", review(tb, scheme, betaVersion), converted},
		{"empty body", nil, rejected},
		{"truncated JSON", []byte(`{"request":{"uid":`), rejected},
		{"JSON null", []byte(`null`), rejected},
		{"no request", []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), rejected},
		{"objects not a list", []byte(`{"request":{"uid":"1","desiredAPIVersion":"minitask.dev/v1alpha1","objects":{}}}`), rejected},
		{"object without apiVersion", rawReview(alphaVersion, `{"kind":"Task"}`), failed},
		{"object of a wrong shape", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Task","spec":5}`), failed},
		{"object of an unknown kind", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"Pipeline"}`), failed},
		{"object of another group", rawReview(alphaVersion, `{"apiVersion":"v1","kind":"ConfigMap"}`), failed},
		{"a list", rawReview(alphaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskList","items":[]}`), failed},
		{"object JSON null", rawReview(alphaVersion, `null`), failed},
		{"apiVersion key in the wrong case", rawReview(alphaVersion, `{"ApiVersion":"minitask.dev/v1beta1","kind":"Task"}`), failed},
		{"unknown desired version", rawReview("minitask.dev/v2", `{"apiVersion":"minitask.dev/v1beta1","kind":"Task"}`), failed},
		{"to its own version", rawReview(betaVersion, `{"apiVersion":"minitask.dev/v1beta1","kind":"TaskRun"}`), failed},
	}
}

// checkHandler posts body to handler, checks the invariants every answer
// keeps, and returns how the handler answered.
func checkHandler(tb testing.TB, scheme *runtime.Scheme, handler http.Handler, body []byte) handlerOutcome {
	tb.Helper()
	recorder := httptest.NewRecorder()
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
		if convertible(scheme, request.Request) {
			tb.Fatalf("conversion of valid objects failed: %s\nrequest: %q", response.Result.Message, body)
		}
		return failed
	case metav1.StatusSuccess:
		checkConverted(tb, request.Request, response.ConvertedObjects)
		return converted
	default:
		tb.Fatalf("answer status %q, want Success or Failure", response.Result.Status)
		return ""
	}
}

// checkConverted checks that each object came back once, in the version asked
// for, and that no hub object carries the conversion annotation.
func checkConverted(tb testing.TB, request *apix.ConversionRequest, objects []runtime.RawExtension) {
	tb.Helper()
	if len(objects) != len(request.Objects) {
		tb.Fatalf("%d objects converted, want %d", len(objects), len(request.Objects))
	}
	for i, object := range objects {
		var got struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(object.Raw, &got); err != nil {
			tb.Fatalf("converted object %d unreadable: %v", i, err)
		}
		if got.APIVersion != request.DesiredAPIVersion {
			tb.Errorf("converted object %d has apiVersion %q, want %q", i, got.APIVersion, request.DesiredAPIVersion)
		}
		if _, ok := got.Annotations[AnnotationConversionData]; ok && got.APIVersion == betaVersion {
			tb.Errorf("converted v1beta1 object %d carries the conversion annotation", i)
		}
	}
}

// convertible reports whether every object of request decodes as a Task or
// TaskRun of the version the request does not ask for: what the contract says
// always converts.
func convertible(scheme *runtime.Scheme, request *apix.ConversionRequest) bool {
	if request.DesiredAPIVersion != alphaVersion && request.DesiredAPIVersion != betaVersion {
		return false
	}
	decoder := crconversion.NewDecoder(scheme)
	for _, raw := range request.Objects {
		object, gvk, err := decoder.Decode(raw.Raw)
		if err != nil || gvk.GroupVersion().String() == request.DesiredAPIVersion {
			return false
		}
		// The decoder finds the kind case-insensitively ("ApiVersion") but
		// fills the object case-sensitively, and the converter goes by the
		// object. The API server always sends "apiVersion".
		if object.GetObjectKind().GroupVersionKind() != *gvk {
			return false
		}
		switch object.(type) {
		case *v1alpha1.Task, *v1alpha1.TaskRun, *v1beta1.Task, *v1beta1.TaskRun:
		default:
			return false
		}
	}
	return true
}

func newTestScheme(tb testing.TB) *runtime.Scheme {
	tb.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	return scheme
}

// newConversionHandler is the webhook handler with the converters that
// webhooks.SetupWithManager registers, built by the same constructors.
func newConversionHandler(tb testing.TB, scheme *runtime.Scheme) http.Handler {
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
	return crconversion.NewWebhookHandler(scheme, registry)
}

// review is a ConversionReview asking for objects in the desired version.
func review(tb testing.TB, scheme *runtime.Scheme, desired string, objects ...runtime.Object) []byte {
	tb.Helper()
	var raws []string
	for _, object := range objects {
		gvk, err := apiutil.GVKForObject(object, scheme)
		if err != nil {
			tb.Fatal(err)
		}
		object.GetObjectKind().SetGroupVersionKind(gvk)
		raws = append(raws, mustJSON(tb, object))
	}
	return rawReview(desired, raws...)
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
