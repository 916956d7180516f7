package conversion

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The steps the cases of this file start from: build has every field
// v1alpha1 cannot express, test has env only, lint has none.
var (
	buildEnv = []corev1.EnvVar{
		{Name: "GOFLAGS", Value: "-mod=mod"},
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token", Optional: ptr.To(false)}}},
	}
	buildStepWithAdditions = v1beta1.Step{
		Name: "build", Image: "golang:1.26",
		Command: []string{"go"}, Args: []string{"build", "./..."}, WorkingDir: "$(workspaces.source.path)",
		Env:     buildEnv,
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
		ComputeResources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
	}
	testStepWithEnv = v1beta1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./...", Env: []corev1.EnvVar{{Name: "CGO_ENABLED", Value: "0"}}}
	lintStep        = v1beta1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"}
)

// buildStepStash, testStepStash: the stash entries of the steps above.
const (
	buildStepStash = `{"name":"build","command":["go"],"args":["build","./..."],"workingDir":"$(workspaces.source.path)",` +
		`"env":[{"name":"GOFLAGS","value":"-mod=mod"},{"name":"TOKEN","valueFrom":{"secretKeyRef":{"name":"git","key":"token","optional":false}}}],` +
		`"envFrom":[{"prefix":"CFG_","configMapRef":{"name":"settings"}}],` +
		`"computeResources":{"limits":{"memory":"1Gi"},"requests":{"cpu":"500m"}}}`
	testStepStash = `{"name":"test","env":[{"name":"CGO_ENABLED","value":"0"}]}`
)

func TestStepsFromHub(t *testing.T) {
	tests := map[string]struct {
		hub  *v1beta1.Task
		want *v1alpha1.Task
	}{
		"only steps with additions are stashed, by name, in order": {
			hub: hubTask().Steps(buildStepWithAdditions, lintStep, testStepWithEnv).Obj(),
			want: spokeTask().Steps(
				v1alpha1.Step{Name: "build", Image: "golang:1.26"},
				v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"},
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."},
			).Annotation(stashed(`{"spec":{"steps":[` + buildStepStash + `,` + testStepStash + `]}}`)).Obj(),
		},
		"steps without additions need no stash": {
			hub:  hubTask().Steps(lintStep).Obj(),
			want: spokeTask().Steps(v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"}).Obj(),
		},
		"empty lists are no additions": {
			hub: hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26",
				Command: []string{}, Args: []string{}, Env: []corev1.EnvVar{}, EnvFrom: []corev1.EnvFromSource{}}).Obj(),
			want: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.26"}).Obj(),
		},
		"empty computeResources is an addition, apart from absent": {
			hub:  hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26", ComputeResources: &corev1.ResourceRequirements{}}).Obj(),
			want: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.26"}).Annotation(stashed(`{"spec":{"steps":[{"name":"build","computeResources":{}}]}}`)).Obj(),
		},
		"an empty string in command is kept": {
			hub:  hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26", Command: []string{""}}).Obj(),
			want: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.26"}).Annotation(stashed(`{"spec":{"steps":[{"name":"build","command":[""]}]}}`)).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkFromHub(t, ConvertBetaTaskToAlpha, tc.hub, tc.want)
		})
	}
}

// TestStepsToHub: the stash's step additions are merged back by name, into
// whatever steps the v1alpha1 object now holds.
func TestStepsToHub(t *testing.T) {
	stashKey, stashValue := stashed(`{"spec":{"steps":[` + buildStepStash + `,` + testStepStash + `]}}`)
	withScript := func(s v1beta1.Step, script string) v1beta1.Step { s.Script = script; return s }
	withImage := func(s v1beta1.Step, image string) v1beta1.Step { s.Image = image; return s }

	tests := map[string]struct {
		spoke *v1alpha1.Task
		want  *v1beta1.Task
	}{
		"each step gets its own additions back": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "build", Image: "golang:1.26"},
				v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"},
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."},
			).Annotation(stashKey, stashValue).Obj(),
			want: hubTask().Steps(buildStepWithAdditions, lintStep, testStepWithEnv).Obj(),
		},
		"a v1alpha1 writer that edits a step's script keeps the step's env": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test -race ./..."},
			).Annotation(stashKey, stashValue).Obj(),
			want: hubTask().Steps(withScript(testStepWithEnv, "go test -race ./...")).Obj(),
		},
		"a v1alpha1 writer that edits a step's image keeps its additions": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.27"}).Annotation(stashKey, stashValue).Obj(),
			want:  hubTask().Steps(withImage(buildStepWithAdditions, "golang:1.27")).Obj(),
		},
		"reordered steps keep their additions": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."},
				v1alpha1.Step{Name: "lint", Image: "golangci/golangci-lint", Script: "golangci-lint run"},
				v1alpha1.Step{Name: "build", Image: "golang:1.26"},
			).Annotation(stashKey, stashValue).Obj(),
			want: hubTask().Steps(testStepWithEnv, lintStep, buildStepWithAdditions).Obj(),
		},
		"a removed step's additions are dropped": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "build", Image: "golang:1.26"},
			).Annotation(stashKey, stashValue).Obj(),
			want: hubTask().Steps(buildStepWithAdditions).Obj(),
		},
		"a renamed step loses its additions": {
			spoke: spokeTask().Steps(
				v1alpha1.Step{Name: "compile", Image: "golang:1.26"},
				v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."},
			).Annotation(stashKey, stashValue).Obj(),
			want: hubTask().Steps(v1beta1.Step{Name: "compile", Image: "golang:1.26"}, testStepWithEnv).Obj(),
		},
		"a new step with a stashed step's name gets its additions": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "test", Image: "alpine", Script: "true"}).Annotation(stashKey, stashValue).Obj(),
			want:  hubTask().Steps(v1beta1.Step{Name: "test", Image: "alpine", Script: "true", Env: testStepWithEnv.Env}).Obj(),
		},
		"no steps: the additions are dropped": {
			spoke: spokeTask().Steps().Annotation(stashKey, stashValue).Obj(),
			want:  hubTask().Steps().Obj(),
		},
		"a stash naming a step twice: the first entry wins": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."}).
				Annotation(stashed(`{"spec":{"steps":[` + testStepStash + `,{"name":"test","workingDir":"/elsewhere"}]}}`)).Obj(),
			want: hubTask().Steps(testStepWithEnv).Obj(),
		},
		"stashed steps carry additions only: name, image and script come from v1alpha1": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./..."}).
				Annotation(stashed(`{"spec":{"steps":[{"name":"test","image":"evil","script":"rm -rf /","env":[{"name":"A","value":"1"}]}]}}`)).Obj(),
			want: hubTask().Steps(v1beta1.Step{Name: "test", Image: "golang:1.26", Script: "go test ./...",
				Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}).Obj(),
		},
		"a stash whose steps are of the wrong shape is ignored whole": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.26"}).
				Annotation(stashed(`{"spec":{"description":"d","steps":[{"name":"build","env":"GOFLAGS=-mod=mod"}]}}`)).Obj(),
			want: hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26"}).Obj(),
		},
		"a stash with an unparsable quantity is ignored whole": {
			spoke: spokeTask().Steps(v1alpha1.Step{Name: "build", Image: "golang:1.26"}).
				Annotation(stashed(`{"spec":{"description":"d","steps":[{"name":"build","computeResources":{"limits":{"cpu":"lots"}}}]}}`)).Obj(),
			want: hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26"}).Obj(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkToHub(t, ConvertAlphaTaskToBeta, tc.spoke, tc.want)
		})
	}
}

// TestQuantitiesKeepTheirValue: a quantity comes back with its value, in
// its canonical text: 0.5 is stashed, and restored, as 500m. Quantities
// are compared by value (Quantity.Equal, which cmp uses), as the API's
// own consumers compare them.
func TestQuantitiesKeepTheirValue(t *testing.T) {
	for text, canonical := range map[string]string{"0.5": "500m", "1000m": "1", "1024Mi": "1Gi", "500m": "500m", "1.5Gi": "1536Mi"} {
		t.Run(text, func(t *testing.T) {
			hub := hubTask().Steps(v1beta1.Step{Name: "build", Image: "golang:1.26", ComputeResources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(text)}}}).Obj()
			spoke := &v1alpha1.Task{}
			if err := ConvertBetaTaskToAlpha(t.Context(), hub, spoke); err != nil {
				t.Fatal(err)
			}
			wantStash := stash(`{"spec":{"steps":[{"name":"build","computeResources":{"requests":{"cpu":"` + canonical + `"}}}]}}`)
			if got := spoke.Annotations[AnnotationConversionData]; got != wantStash {
				t.Errorf("stash = %s, want %s", got, wantStash)
			}
			back := &v1beta1.Task{}
			if err := ConvertAlphaTaskToBeta(t.Context(), throughJSON(t, spoke), back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(hub, back); diff != "" {
				t.Errorf("round trip mismatch by value (-want +got):\n%s", diff)
			}
		})
	}
}
