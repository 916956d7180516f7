package conversion

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// descriptionFilling is a description that makes a default hub Task's
// v1alpha1 annotations take exactly limit+over bytes: testMeta's own
// annotation (16+7 bytes), the stash's key (28) and its JSON around the
// description (39).
func descriptionFilling(over int) string {
	const around = len("example.com/note") + len("keep me") + len(AnnotationConversionData) +
		len(`{"v1beta1":{"spec":{"description":""}}}`)
	return strings.Repeat("d", MaxAnnotationsBytes-around+over)
}

func TestStashOverTheLimitIsOmitted(t *testing.T) {
	atLimit := descriptionFilling(0)
	overLimit := descriptionFilling(1)
	// Own annotations that leave no room for the marker either.
	crowded := map[string]string{"example.com/big": strings.Repeat("x", MaxAnnotationsBytes-len("example.com/big")-10)}

	tests := map[string]struct {
		hub  *v1beta1.Task
		want *v1alpha1.Task
		size int // SpokeAnnotationsSize
	}{
		"exactly at the limit: stashed": {
			hub:  hubTask().Description(atLimit).Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"description":"` + atLimit + `"}}`)).Obj(),
			size: MaxAnnotationsBytes,
		},
		"one byte over: omitted and marked": {
			hub:  hubTask().Description(overLimit).Obj(),
			want: spokeTask().Annotation(AnnotationConversionDataOmitted, "true").Obj(),
			size: MaxAnnotationsBytes + 1,
		},
		"a stale stash and marker on the hub are replaced": {
			hub: hubTask().Annotation(AnnotationConversionData, "stale").Annotation(AnnotationConversionDataOmitted, "true").
				Description("d").Obj(),
			want: spokeTask().Annotation(stashed(`{"spec":{"description":"d"}}`)).Obj(),
			size: 23 + len(AnnotationConversionData) + len(`{"v1beta1":{"spec":{"description":"d"}}}`),
		},
		"JSON escaping counts: 50 KiB of < take 300 KiB": {
			hub:  hubTask().Description(oversizedText(50 << 10)).Obj(),
			want: spokeTask().Annotation(AnnotationConversionDataOmitted, "true").Obj(),
			size: 23 + len(AnnotationConversionData) + len(`{"v1beta1":{"spec":{"description":""}}}`) + 6*(50<<10),
		},
		"no room even for the marker: neither": {
			hub:  hubTask().Annotations(crowded).Description("d").Obj(),
			want: spokeTask().Annotations(crowded).Obj(),
			size: MaxAnnotationsBytes - 10 + len(AnnotationConversionData) + len(`{"v1beta1":{"spec":{"description":"d"}}}`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := &v1alpha1.Task{}
			if err := ConvertBetaTaskToAlpha(t.Context(), tc.hub, got); err != nil {
				t.Fatalf("ConvertBetaTaskToAlpha() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ConvertBetaTaskToAlpha() mismatch (-want +got):\n%.3000s", diff)
			}
			size, err := SpokeAnnotationsSize(tc.hub)
			if err != nil {
				t.Fatal(err)
			}
			if size != tc.size {
				t.Errorf("SpokeAnnotationsSize() = %d, want %d", size, tc.size)
			}
		})
	}
}

// TestSpokeAnnotationsSizeIsWhatConversionWrites: below the limit, the size
// the webhook judges by is exactly what the API server will count.
func TestSpokeAnnotationsSizeIsWhatConversionWrites(t *testing.T) {
	g := newObjectGenerator(roundTripSeed + 10)
	for range 2000 {
		hub := g.hubTaskRun()
		spoke := &v1alpha1.TaskRun{}
		if err := ConvertBetaTaskRunToAlpha(t.Context(), hub, spoke); err != nil {
			t.Fatal(err)
		}
		size, err := SpokeAnnotationsSize(hub)
		if err != nil {
			t.Fatal(err)
		}
		if got := annotationsBytes(spoke.Annotations); got != size {
			t.Fatalf("SpokeAnnotationsSize() = %d, the converted annotations take %d: %v", size, got, spoke.Annotations)
		}
	}
	for range 2000 {
		hub := g.hubTask()
		spoke := &v1alpha1.Task{}
		if err := ConvertBetaTaskToAlpha(t.Context(), hub, spoke); err != nil {
			t.Fatal(err)
		}
		size, err := SpokeAnnotationsSize(hub)
		if err != nil {
			t.Fatal(err)
		}
		if got := annotationsBytes(spoke.Annotations); got != size {
			t.Fatalf("SpokeAnnotationsSize() = %d, the converted annotations take %d: %v", size, got, spoke.Annotations)
		}
	}
	if _, err := SpokeAnnotationsSize(&v1alpha1.Task{}); err == nil {
		t.Error("SpokeAnnotationsSize of a v1alpha1 Task: no error")
	}
}

// TestRelease3FieldsCountTowardsTheLimit: release 3's fields (issue 15's
// among them) ride in the stash, so they can take it past the limit too;
// the object then reads through v1alpha1 with the marker instead, and
// SpokeAnnotationsSize says by how much.
func TestRelease3FieldsCountTowardsTheLimit(t *testing.T) {
	// 100 env values (the CRD's most) of 500 characters that JSON writes
	// in six bytes each: about 300 KB in one step's stash entry.
	env := make([]corev1.EnvVar, 100)
	for i := range env {
		env[i] = corev1.EnvVar{Name: fmt.Sprintf("V%02d", i), Value: oversizedText(500)}
	}
	selector := map[string]string{}
	for i := range 60 {
		selector[fmt.Sprintf("example.com/k%02d", i)] = oversizedText(1 << 10)
	}
	args := []string{oversizedText(45 << 10)}
	// Issue 15's: status.attempts at the CRD's most, 10 messages of 32 KiB
	// (about 2 MB of stash once escaped), and 16 result descriptions of 4 KiB.
	attempts := make([]v1beta1.Attempt, 10)
	for i := range attempts {
		attempts[i] = v1beta1.Attempt{PodName: fmt.Sprintf("nightly-pod-%d", i), StartTime: &started, CompletionTime: &finished,
			Reason: string(v1beta1.RetryOnPodFailed), Message: oversizedText(32 << 10)}
	}
	results := make([]v1beta1.ResultDeclaration, 16)
	for i := range results {
		results[i] = v1beta1.ResultDeclaration{Name: fmt.Sprintf("r%02d", i), Description: oversizedText(4 << 10)}
	}

	tests := map[string]struct {
		hub runtime.Object
	}{
		"a step's env":                     {hub: hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26", Env: env}).Obj()},
		"a step's args":                    {hub: hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26", Args: args}).Obj()},
		"a run's podTemplate.nodeSelector": {hub: hubRun().PodTemplate(v1beta1.PodTemplate{NodeSelector: selector}).Obj()},
		"a run's status.attempts":          {hub: withOutcome(hubRun().Obj(), nil, attempts...)},
		"a Task's results":                 {hub: withResults(hubTask().Obj(), results...)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var annotations map[string]string
			switch hub := tc.hub.(type) {
			case *v1beta1.Task:
				spoke := &v1alpha1.Task{}
				if err := ConvertBetaTaskToAlpha(t.Context(), hub, spoke); err != nil {
					t.Fatal(err)
				}
				annotations = spoke.Annotations
			case *v1beta1.TaskRun:
				spoke := &v1alpha1.TaskRun{}
				if err := ConvertBetaTaskRunToAlpha(t.Context(), hub, spoke); err != nil {
					t.Fatal(err)
				}
				annotations = spoke.Annotations
			}
			if annotations[AnnotationConversionDataOmitted] != "true" || annotations[AnnotationConversionData] != "" {
				t.Errorf("annotations %.200v: want the marker and no stash", annotations)
			}
			size, err := SpokeAnnotationsSize(tc.hub)
			if err != nil {
				t.Fatal(err)
			}
			if size <= MaxAnnotationsBytes {
				t.Errorf("SpokeAnnotationsSize() = %d, want more than %d", size, MaxAnnotationsBytes)
			}
		})
	}
}

func TestMarkerIsRemovedOnTheWayToTheHub(t *testing.T) {
	tests := map[string]struct {
		spoke *v1alpha1.TaskRun
		want  *v1beta1.TaskRun
	}{
		"marker alone": {
			spoke: spokeRun().Annotation(AnnotationConversionDataOmitted, "true").Obj(),
			want:  hubRun().Obj(),
		},
		"marker the only annotation": {
			spoke: spokeRun().Annotations(map[string]string{AnnotationConversionDataOmitted: "true"}).Obj(),
			want:  hubRun().Annotations(nil).Obj(),
		},
		"marker beside a stash a client added": {
			spoke: spokeRun().Annotation(AnnotationConversionDataOmitted, "true").Annotation(stashed(`{"spec":{"status":"Cancelled"}}`)).Obj(),
			want:  hubRun().Cancelled().Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskRunToBeta, tc.spoke, tc.want)
		})
	}
}

// annotationsBytes is what the API server counts of annotations against its
// limit: every key's and value's length.
func annotationsBytes(annotations map[string]string) int {
	n := 0
	for k, v := range annotations {
		n += len(k) + len(v)
	}
	return n
}
