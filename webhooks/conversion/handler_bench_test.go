package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"
	apix "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// benchmarkSizes are the review sizes of the benchmark issue: one object, a
// page, the CRD scale target's LIST (1,500) and its 10,000.
var benchmarkSizes = []int{1, 100, 1500, 10000}

// reviewSizes are the review sizes to run: benchmarkSizes, or with -short
// (make bench-check) only the first two. They go through the same code, and
// the large ones take minutes of CI's time to say nothing a smoke run needs.
func reviewSizes() []int {
	if testing.Short() {
		return benchmarkSizes[:2]
	}
	return benchmarkSizes
}

// BenchmarkConversionHandler measures the conversion handler the manager
// serves, in-process, against its floors: decoding the same review into
// typed objects, each object's conversion annotation too, and encoding a
// response of them, unconverted, with each codec, encoding/json in
// controller-runtime's way ("floor-encoding-json") and the handler's own,
// json/v2 ("floor"). The handler does that same JSON work plus converting
// each object, so the ratio to the faster floor is what conversion itself
// costs. The floors run on one goroutine; the handler converts a large
// review's objects on every processor (reviewStream).
//
// The annotation is JSON inside the object's JSON: on a v1alpha1 TaskRun,
// about half of the object, and most of its structure (the steps, their
// times, the Pod template), which any handler must read to answer with
// them. Until release 6 the floors read it as a string only, so that the
// ratio of a v1alpha1 TaskRun charged the reading of that JSON to
// conversion (docs/benchmarks.md, section 1); "paired" still reports that
// ratio, to the floor that reads it as text (floorStashAsText).
//
// "paired" measures the handler and the codec's floors turn about, on the
// same review, and reports each one's time per review (convert-ns/op,
// floor-ns/op, floor-stash-as-text-ns/op) and the handler's ratios to them
// (ratio, ratio-stash-as-text): on a shared machine whose speed drifts by
// tens of percent within minutes, the two sides of a ratio measured apart
// drift apart too, while a pair shares whatever the machine is doing.
//
// It measures every pair of versions the API server may ask for, both
// kinds (handlerBenchmarkInputs): the webhook converts between any two
// served versions, not only to and from the hub.
func BenchmarkConversionHandler(b *testing.B) {
	scheme := newTestScheme(b)
	convert, floor := newConversionHandler(b, scheme), &codecFloor{scheme: scheme, readStash: true}
	floorStashAsText := &codecFloor{scheme: scheme}
	modes := []handlerMode{
		{"convert", convert},
		{"floor", floor},
		{"floor-encoding-json", &decodeEncodeFloor{decoder: crconversion.NewDecoder(scheme)}},
	}
	for _, input := range handlerBenchmarkInputs(b) {
		for _, n := range reviewSizes() {
			body := review(b, scheme, input.To, input.Objects(n)...)
			name := input.PairName(n)
			for _, mode := range modes {
				b.Run(name+"/"+mode.name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						serveReview(b, mode.handler, body)
					}
				})
			}
			b.Run(name+"/paired", func(b *testing.B) { benchmarkPaired(b, convert, floor, floorStashAsText, body) })
		}
	}
}

// benchmarkPaired serves body to convert, to floor and to floorStashAsText
// in turn, each first every third time, and reports the time each took per
// review and the handler's ratio to each floor.
func benchmarkPaired(b *testing.B, convert, floor, floorStashAsText http.Handler, body []byte) {
	handlers := [...]http.Handler{convert, floor, floorStashAsText}
	var spent [len(handlers)]time.Duration
	turn := 0
	for b.Loop() {
		for i := range handlers {
			h := (turn + i) % len(handlers)
			start := time.Now()
			serveReview(b, handlers[h], body)
			spent[h] += time.Since(start)
		}
		turn++
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "convert-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(spent[2].Nanoseconds())/float64(b.N), "floor-stash-as-text-ns/op")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "ratio")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "ratio-stash-as-text")
}

// handlerMode is one handler the benchmark measures on every input.
type handlerMode struct {
	name    string
	handler http.Handler
}

// serveReview posts one review body to h and fails unless it answers 200.
func serveReview(b *testing.B, h http.Handler, body []byte) {
	recorder := newRecorder()
	h.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body)))
	if recorder.Code != http.StatusOK || !bytes.Contains(recorder.Body.Bytes(), []byte(`"status":"Success"`)) {
		b.Fatalf("HTTP %d: %.300s", recorder.Code, recorder.Body.Bytes())
	}
}

// decodeEncodeFloor does what any conversion handler must, in the shape of
// controller-runtime's: read the review, decode every object into its typed
// Go struct through the scheme, and encode a response carrying the objects.
// It converts nothing.
type decodeEncodeFloor struct{ decoder *crconversion.Decoder }

func (f *decodeEncodeFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review := &apix.ConversionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	objects := make([]runtime.RawExtension, 0, len(review.Request.Objects))
	for _, raw := range review.Request.Objects {
		obj, _, err := f.decoder.Decode(raw.Raw)
		if err == nil {
			err = readStashOf(obj, decodeStashEncodingJSON)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		objects = append(objects, runtime.RawExtension{Object: obj})
	}
	review.Response = &apix.ConversionResponse{
		UID: review.Request.UID, ConvertedObjects: objects, Result: metav1.Status{Status: metav1.StatusSuccess},
	}
	review.Request = nil
	_ = json.NewEncoder(w).Encode(review)
}

// codecFloor is decodeEncodeFloor with the handler's codec (codec.go,
// answer.go): read the review, decode every object into its typed Go
// struct, and its conversion annotation as the handler's converters read
// it (readStash; without it, floorStashAsText), and encode a response
// carrying the objects, on one goroutine. It converts nothing.
type codecFloor struct {
	scheme    *runtime.Scheme
	readStash bool
}

func (f *codecFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review := newConversionReview()
	if err := readReview(r.Body, r.ContentLength, review); err != nil || review.request() == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	out := answer{out: errWriter{w: w}}
	for _, raw := range review.Request.Objects.held.values {
		header, err := decodeHeader(raw)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		obj, err := f.scheme.New(schema.FromAPIVersionAndKind(header.APIVersion, header.Kind))
		if err == nil {
			err = decodeObject(raw, obj)
		}
		if err == nil && f.readStash {
			err = readStashOf(obj, decodeStash)
		}
		var value jsontext.Value
		if err == nil {
			value, err = encodeObject(obj)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		out.object(value)
	}
	_ = out.end(review.Request.UID, metav1.Status{Status: metav1.StatusSuccess}, review.TypeMeta)
}

// readStashOf decodes obj's conversion annotation, if it has one, with
// decode, into what its kind's converters read the stash of its version as:
// the JSON a conversion of obj reads besides the object's own, which the
// floors read too.
func readStashOf(obj runtime.Object, decode func(value string, into any) error) error {
	var annotations map[string]string
	var into any
	switch obj := obj.(type) {
	case *v1alpha1.TaskRun:
		annotations, into = obj.Annotations, &alphaTaskRunStashRead{}
	case *v1alpha1.Task:
		annotations, into = obj.Annotations, &alphaTaskStash{}
	case *v1beta1.TaskRun:
		annotations, into = obj.Annotations, &betaTaskRunStash{}
	case *v1beta1.Task:
		annotations, into = obj.Annotations, &betaTaskStash{}
	}
	value, ok := annotations[AnnotationConversionData]
	if !ok {
		return nil
	}
	return decode(value, into)
}

// decodeStashEncodingJSON is decodeStash with encoding/json, for the floor
// in controller-runtime's way.
func decodeStashEncodingJSON(value string, into any) error {
	return json.Unmarshal([]byte(value), into)
}

// TestFloorsReadEveryStash holds readStashOf to the benchmark's inputs:
// every object that carries a stash has it read by both floors' decoders,
// into types that take its content (a type that did not would read nothing,
// and the floor would do less than the handler).
func TestFloorsReadEveryStash(t *testing.T) {
	decoders := map[string]func(value string, into any) error{
		"codec":         decodeStash,
		"encoding/json": decodeStashEncodingJSON,
	}
	stashes := 0
	for _, input := range handlerBenchmarkInputs(t) {
		for _, obj := range input.Objects(2) {
			if obj.(metav1.Object).GetAnnotations()[AnnotationConversionData] == "" {
				continue
			}
			stashes++
			for name, decode := range decoders {
				read := false
				err := readStashOf(obj, func(value string, into any) error {
					err := decode(value, into)
					read = err == nil && !reflect.ValueOf(into).Elem().IsZero()
					return err
				})
				if err != nil || !read {
					t.Errorf("%s, %s floor: the stash was not read (error %v)", input.PairName(2), name, err)
				}
			}
		}
	}
	if stashes == 0 {
		t.Fatal("no benchmark input carries a stash")
	}
}

// benchmarkInput is one kind in one direction: objects of version From,
// made n at a time with distinct names, to convert to To.
type benchmarkInput struct {
	Kind     string
	From, To string
	Objects  func(n int) []runtime.Object
}

// Name is the sub-benchmark name of the input with n objects.
func (in benchmarkInput) Name(n int) string {
	return fmt.Sprintf("kind=%s/to=%s/objects=%d", in.Kind, strings.TrimPrefix(in.To, "minitask.dev/"), n)
}

// PairName is Name with the version converted from, for benchmarks that
// convert to one version from more than one.
func (in benchmarkInput) PairName(n int) string {
	return fmt.Sprintf("kind=%s/from=%s/to=%s/objects=%d", in.Kind,
		strings.TrimPrefix(in.From, "minitask.dev/"), strings.TrimPrefix(in.To, "minitask.dev/"), n)
}

func benchmarkInputs(tb testing.TB) []benchmarkInput {
	hubTasks := func(n int) []runtime.Object { return repeat(n, func(i int) runtime.Object { return largeTask(i) }) }
	hubRuns := func(n int) []runtime.Object { return repeat(n, func(i int) runtime.Object { return finishedRun(i) }) }
	// The v1alpha1 objects are the v1beta1 ones converted, as the API server
	// hands them to v1alpha1 clients: their annotation carries what v1alpha1
	// cannot, so converting them back restores it.
	spokeTasks := func(n int) []runtime.Object {
		return repeat(n, func(i int) runtime.Object {
			dst := &v1alpha1.Task{}
			if err := ConvertBetaTaskToAlpha(context.Background(), largeTask(i), dst); err != nil {
				tb.Fatal(err)
			}
			return dst
		})
	}
	spokeRuns := func(n int) []runtime.Object {
		return repeat(n, func(i int) runtime.Object {
			dst := &v1alpha1.TaskRun{}
			if err := ConvertBetaTaskRunToAlpha(context.Background(), finishedRun(i), dst); err != nil {
				tb.Fatal(err)
			}
			return dst
		})
	}
	return []benchmarkInput{
		{"TaskRun", betaVersion, alphaVersion, hubRuns},
		{"TaskRun", alphaVersion, betaVersion, spokeRuns},
		{"Task", betaVersion, alphaVersion, hubTasks},
		{"Task", alphaVersion, betaVersion, spokeTasks},
	}
}

// handlerBenchmarkInputs are benchmarkInputs, the pairs of the spokes, and
// those v1, the hub since release 5, adds: each spoke to v1 (v1beta1 to v1
// is what the API server's v1 watch cache asks on every v1beta1 write) and
// v1 to each spoke (every read through a spoke of what is stored as v1,
// from release 6), on the same large Tasks and finished runs.
func handlerBenchmarkInputs(tb testing.TB) []benchmarkInput {
	ctx := context.Background()
	v1Tasks := func(n int) []runtime.Object {
		return repeat(n, func(i int) runtime.Object { return V1TaskOf(ctx, largeTask(i)) })
	}
	v1Runs := func(n int) []runtime.Object {
		return repeat(n, func(i int) runtime.Object { return V1TaskRunOf(ctx, finishedRun(i)) })
	}
	spokes := benchmarkInputs(tb)
	betaRuns, alphaRuns, betaTasks, alphaTasks := spokes[0].Objects, spokes[1].Objects, spokes[2].Objects, spokes[3].Objects
	return append(spokes,
		benchmarkInput{"TaskRun", alphaVersion, v1Version, alphaRuns},
		benchmarkInput{"TaskRun", betaVersion, v1Version, betaRuns},
		benchmarkInput{"TaskRun", v1Version, alphaVersion, v1Runs},
		benchmarkInput{"TaskRun", v1Version, betaVersion, v1Runs},
		benchmarkInput{"Task", alphaVersion, v1Version, alphaTasks},
		benchmarkInput{"Task", betaVersion, v1Version, betaTasks},
		benchmarkInput{"Task", v1Version, alphaVersion, v1Tasks},
		benchmarkInput{"Task", v1Version, betaVersion, v1Tasks},
	)
}

func repeat(n int, object func(i int) runtime.Object) []runtime.Object {
	objects := make([]runtime.Object, n)
	for i := range objects {
		objects[i] = object(i)
	}
	return objects
}

// largeTask is a Task of about 10 KB, most of it in step scripts, with a
// description, params, a workspace and step env, resources and working
// directory that v1alpha1 keeps only in the annotation.
func largeTask(i int) *v1beta1.Task {
	script := strings.Repeat("echo \"$(params.target): building part of the tree\" && make -C ./src all\n", 45)
	task := hubTask().
		Description("Builds, tests and publishes the project; run nightly and on every tag.").
		Params(
			v1beta1.ParamSpec{Name: "target", Description: "What to build", Default: ptr.To("all")},
			v1beta1.ParamSpec{Name: "registry", Description: "Where to push"},
		).
		Workspaces(v1beta1.WorkspaceDeclaration{Name: "source", Description: "The checked-out repository", ReadOnly: ptr.To(false)}).
		Steps(
			v1beta1.Step{Name: "build", Image: "golang:1.26", Script: script, WorkingDir: "$(workspaces.source.path)",
				Env: []corev1.EnvVar{{Name: "TARGET", Value: "$(params.target)"}, {Name: "GOFLAGS", Value: "-mod=mod"}},
				ComputeResources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			v1beta1.Step{Name: "test", Image: "golang:1.26", Script: script},
			v1beta1.Step{Name: "publish", Image: "$(params.registry)/publisher:1", Script: script,
				Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "registry"}, Key: "token"}}}}},
		).Obj()
	task.Name = fmt.Sprintf("build-%05d", i)
	return task
}

// finishedRun is a TaskRun as the controller leaves it when every step
// succeeded: params, a timeout, a workspace, a ServiceAccount, a Pod
// template, its Pod, times, the condition, three steps.
func finishedRun(i int) *v1beta1.TaskRun {
	step := func(name string, from, to time.Duration) v1beta1.StepState {
		return v1beta1.StepState{Name: name, State: v1beta1.StepTerminated, ExitCode: ptr.To[int32](0), Reason: "Completed",
			StartedAt: ptr.To(metav1.NewTime(started.Add(from))), FinishedAt: ptr.To(metav1.NewTime(started.Add(to)))}
	}
	name := fmt.Sprintf("build-%05d", i)
	run := hubRun().
		Params(v1beta1.Param{Name: "target", Value: "release"}, v1beta1.Param{Name: "registry", Value: "registry.example"}).
		Timeout(30*time.Minute).
		Workspace(v1beta1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "source"}}).
		ServiceAccount("builder").
		PodTemplate(v1beta1.PodTemplate{NodeSelector: map[string]string{"kubernetes.io/arch": "amd64"},
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}}).
		PodName(name+"-pod").Started(started).Completed(finished).
		Conditions(succeeded(metav1.ConditionTrue, v1beta1.ReasonSucceeded, finished)).
		StepStates(step("build", 2*time.Second, time.Minute), step("test", time.Minute, 4*time.Minute),
			step("publish", 4*time.Minute, 6*time.Minute)).Obj()
	run.Name = name
	return run
}
