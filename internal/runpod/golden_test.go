package runpod

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

var update = flag.Bool("update", false, "rewrite testdata/*.yaml from the Pods Build makes now")

// goldenHeader starts every golden file.
const goldenHeader = "# The Pod that runpod.Build makes for this Task shape (golden_test.go).\n" +
	"# Regenerate: go test ./internal/runpod -run TestGoldenPods -update\n"

// TestGoldenPods holds the Pod that Build makes for each Task shape of
// goldenCases equal, field by field, to testdata/NAME.yaml: a change to any
// Pod shows as a diff of these files. A change meant to change them reruns
// with -update and reviews the files' diff.
func TestGoldenPods(t *testing.T) {
	cases := goldenCases()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			values, problems := runstate.ParamValues(tc.task, tc.run)
			if problems.Any() {
				t.Fatalf("the case's params cannot make a Pod: %s", problems)
			}
			tolerationSeconds := ptr.To(managersNodeLostTolerationSeconds)
			if tc.clusterTolerations {
				tolerationSeconds = nil
			}
			pod, err := Build(tc.run, tc.task, Inputs{
				Name:                      runstate.PodName(tc.run),
				Params:                    values,
				ActiveDeadlineSeconds:     tc.deadline,
				Restricted:                tc.restricted,
				NodeLostTolerationSeconds: tolerationSeconds,
				Chained:                   tc.chained,
				PodLevelResources:         !tc.noPodLevelResources,
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := yaml.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(path, append([]byte(goldenHeader), got...), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantText, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (-update writes it)", err)
			}
			// Both read back from YAML: the Pod as the API server gets it.
			var want, sent corev1.Pod
			if err := yaml.UnmarshalStrict(wantText, &want); err != nil {
				t.Fatalf("reading %s: %v", path, err)
			}
			if err := yaml.UnmarshalStrict(got, &sent); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, sent); diff != "" {
				t.Errorf("Build() differs from %s (-want +got); if that is meant, rerun with -update and review the files' diff:\n%s", path, diff)
			}
		})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := cases[strings.TrimSuffix(filepath.Base(f), ".yaml")]; !ok {
			t.Errorf("%s has no case in goldenCases: remove it", f)
		}
	}
}

// managersNodeLostTolerationSeconds is the tolerationSeconds the manager's
// default --node-lost-timeout (1m) gives every Pod.
const managersNodeLostTolerationSeconds int64 = 60

// goldenCase is one Task shape whose Pod testdata/NAME.yaml holds.
type goldenCase struct {
	task *v1.Task
	run  *v1.TaskRun
	// deadline and restricted are the Pod's facts besides the run and its
	// Task (the name is always the first attempt's).
	deadline   *int64
	restricted bool
	// clusterTolerations builds the Pod as --node-lost-timeout=0 does,
	// with no tolerations for a lost node's taints; the others get
	// managersNodeLostTolerationSeconds.
	clusterTolerations bool
	// chained asks for the chained shape, on an API server that keeps
	// Pod-level resources unless noPodLevelResources.
	chained, noPodLevelResources bool
}

// goldenCases are the Task shapes whose Pods are pinned in testdata, by
// file name.
func goldenCases() map[string]goldenCase {
	oneStep := wrappers.Task("ns", "t").Steps(v1.Step{Name: "only", Image: "alpine:3", Command: []string{"echo", "hello"}}).Obj()
	run := func() *wrappers.TaskRunWrapper { return wrappers.TaskRun("ns", "run", "t") }
	fetch := v1.Step{Name: "fetch", Image: "alpine:3", Script: "true"}
	cases := map[string]goldenCase{
		"script-steps": {
			task: wrappers.Task("ns", "t").ParamDefault("greeting", "hello").Param("tag").
				Step("fetch", "alpine:$(params.tag)", "echo \"$(params.greeting)\" $(params.unknown) $HOME").
				Step("build", "golang:1", "go build ./...").
				Step("push", "alpine:3", "#!/bin/sh\nset -e\necho pushed\n").Obj(),
			run:      run().Param("tag", "3").Obj(),
			deadline: ptr.To[int64](3600),
		},
		"script-steps-many": {
			// More than three steps share the kubelet's 12 KiB of
			// termination messages: each wrapper is told a smaller limit.
			task: wrappers.Task("ns", "t").Step("s1", "alpine:3", "true").Step("s2", "alpine:3", "true").
				Step("s3", "alpine:3", "true").Step("s4", "alpine:3", "true").Obj(),
			run: run().Obj(),
		},
		"command-steps": {
			task: wrappers.Task("ns", "t").Param("target").Steps(
				v1.Step{Name: "build", Image: "golang:1", Command: []string{"go", "build"},
					Args: []string{"-o", "bin/$(params.target)", "./cmd/$(params.target)"}, WorkingDir: "/src/$(params.target)",
					Env: []corev1.EnvVar{
						{Name: "TARGET", Value: "$(params.target)"},
						{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
					},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
				v1.Step{Name: "test", Image: "golang:1", Command: []string{"go"}, Args: []string{"test", "./..."}},
			).Obj(),
			run: run().Param("target", "app").Obj(),
		},
		"typed-params": {
			// v1's array and object params: an array's items, one element
			// each, where $(params.NAME[*]) is a whole element of command
			// or args (none for an empty one); an object's keys wherever a
			// string param may go; a default where the run gives none.
			task: wrappers.Task("ns", "t").Params(
				v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray},
				v1.ParamSpec{Name: "flags", Type: v1.ParamTypeArray, Default: v1.NewArrayValue()},
				v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}},
					Default: v1.NewObjectValue(map[string]string{"repo": "example.org/lint", "tag": "1"})},
			).Steps(
				v1.Step{Name: "lint", Image: "$(params.image.repo):$(params.image.tag)", Command: []string{"gofmt", "$(params.flags[*])", "-l"},
					Args: []string{"$(params.files[*])", "--", "$(params.files[*])"},
					Env:  []corev1.EnvVar{{Name: "REPO", Value: "$(params.image.repo)"}}},
				v1.Step{Name: "report", Image: "alpine:3", Script: "echo linted $(params.image.tag)"},
			).Obj(),
			run: run().Params(v1.Param{Name: "files", Value: *v1.NewArrayValue("main.go", "a b.go")}).Obj(),
		},
		"entrypoint-steps": {
			// No script and no command: the image's own entrypoint, args
			// and all.
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "serve", Image: "nginx:1"},
				v1.Step{Name: "probe", Image: "curlimages/curl:8", Args: []string{"-f", "http://localhost"}},
			).Obj(),
			run: run().Obj(),
		},
		"workspaces": {
			task: wrappers.Task("ns", "t").Workspaces(
				v1.WorkspaceDeclaration{Name: "source"},
				v1.WorkspaceDeclaration{Name: "cache", MountPath: "/root/.cache", ReadOnly: ptr.To(true)},
				v1.WorkspaceDeclaration{Name: "settings"},
				v1.WorkspaceDeclaration{Name: "creds", ReadOnly: ptr.To(false)},
				v1.WorkspaceDeclaration{Name: "scratch"},
				v1.WorkspaceDeclaration{Name: strings.Repeat("w", 63)},
			).Steps(
				v1.Step{Name: "fetch", Image: "alpine:3", Script: `cd "$(workspaces.source.path)" && cp "$(workspaces.settings.path)/config" .`},
				v1.Step{Name: "build", Image: "golang:1", Command: []string{"go", "build"}, WorkingDir: "$(workspaces.source.path)",
					Env: []corev1.EnvVar{{Name: "GOCACHE", Value: "$(workspaces.cache.path)/go"}}}).Obj(),
			run: run().
				Workspace(v1.WorkspaceBinding{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "src"}}).
				Workspace(v1.WorkspaceBinding{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}).
				Workspace(v1.WorkspaceBinding{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "git"}}).
				Workspace(v1.WorkspaceBinding{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}).
				Workspace(v1.WorkspaceBinding{Name: "undeclared", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "other"}}).Obj(),
		},
		"results": {
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "version", Image: "alpine:3", Script: "cat VERSION > $(results.version.path)"},
				v1.Step{Name: "digest", Image: "tool:1", Command: []string{"tool", "digest"}, Args: []string{"--out=$(results.digest.path)"}},
				v1.Step{Name: "report", Image: "alpine:3", Script: "cat $(results.digest.path)"},
			).Results("version", "digest").Obj(),
			run: run().Obj(),
		},
		"onerror-continue": {
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "lint", Image: "golangci/golangci-lint:2", Script: "golangci-lint run", OnError: v1.OnErrorContinue},
				v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...", OnError: v1.OnErrorStopAndFail},
			).Results("lint-status").Obj(),
			run: run().Obj(),
		},
		"resources": {
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "build", Image: "golang:1", Command: []string{"go", "build", "./..."}, ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}},
				v1.Step{Name: "push", Image: "alpine:3", Command: []string{"true"}},
			).Obj(),
			run: run().Obj(),
		},
		"pod-template": {
			task: oneStep,
			run:  run().Label("team", "a").Label(runstate.LabelTaskRun, "other").ServiceAccount("builder").PodTemplate(everyPodSetting()).Obj(),
		},
		"node-tolerations-own": {
			// The run tolerates an unreachable node for ever: that is
			// kept, and only the not-ready taint gets the manager's.
			task: oneStep,
			run: run().PodTemplate(v1.PodTemplate{Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}}).Obj(),
		},
		"node-tolerations-cluster-defaults": {
			// --node-lost-timeout=0: the API server's admission gives the
			// Pod the cluster's default tolerations, 300 s.
			task:               oneStep,
			run:                run().Obj(),
			clusterTolerations: true,
		},
		"restricted-namespace": {
			task: wrappers.Task("ns", "t").Workspace("source").Steps(
				v1.Step{Name: "fetch", Image: "alpine/git:2", Command: []string{"git", "clone", "https://example.com/app.git", "$(workspaces.source.path)"}},
				v1.Step{Name: "build", Image: "golang:1", Command: []string{"go", "build"}, WorkingDir: "$(workspaces.source.path)"},
			).Obj(),
			run:        run().Obj(),
			restricted: true,
		},
		"restricted-namespace-own-settings": {
			// What the run's podTemplate sets wins: its user (and so no
			// group or fsGroup added), runAsNonRoot and seccomp profile.
			task:       oneStep,
			run:        run().PodTemplate(v1.PodTemplate{SecurityContext: ownSecurityContext()}).Obj(),
			restricted: true,
		},
		"chained-script-steps": {
			task: wrappers.Task("ns", "t").ParamDefault("greeting", "hello").Results("digest").Steps(
				v1.Step{Name: "lint", Image: "golangci/golangci-lint:2", Script: "golangci-lint run", OnError: v1.OnErrorContinue},
				v1.Step{Name: "build", Image: "golang:1", Script: "echo \"$(params.greeting)\"; go build ./..."},
				v1.Step{Name: "push", Image: "alpine:3", Script: "echo sha256:0 >$(results.digest.path)"},
			).Obj(),
			run:      run().Obj(),
			deadline: ptr.To[int64](3600),
			chained:  true,
		},
		"chained-one-step": {
			// One step needs no waiting: the same Pod either way.
			task:    wrappers.Task("ns", "t").Step("only", "alpine:3", "true").Obj(),
			run:     run().Obj(),
			chained: true,
		},
		"chained-resources": {
			// Two steps request cpu and memory: the Pod requests the
			// largest of each once, its containers none, each keeping
			// its limits; ephemeral storage, asked by one step, stays
			// on its container.
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "build", Image: "golang:1", Script: "go build ./...", ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
						corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}},
				v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...", ComputeResources: &corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				}},
				v1.Step{Name: "push", Image: "alpine:3", Script: "true"},
			).Obj(),
			run:     run().Obj(),
			chained: true,
		},
		"chained-restricted-namespace": {
			task: wrappers.Task("ns", "t").Workspace("source").
				Step("fetch", "alpine/git:2", "git clone https://example.com/app.git $(workspaces.source.path)").
				Step("build", "golang:1", "cd $(workspaces.source.path) && go build").Obj(),
			run:        run().Obj(),
			restricted: true,
			chained:    true,
		},
		"chained-fallback-command-step": {
			task:    wrappers.Task("ns", "t").Steps(fetch, v1.Step{Name: "build", Image: "golang:1", Command: []string{"go", "build"}}).Obj(),
			run:     run().Obj(),
			chained: true,
		},
		"chained-fallback-entrypoint-step": {
			task:    wrappers.Task("ns", "t").Steps(fetch, v1.Step{Name: "scan", Image: "aquasec/trivy:0"}).Obj(),
			run:     run().Obj(),
			chained: true,
		},
		"chained-fallback-device": {
			task: wrappers.Task("ns", "t").Steps(fetch, v1.Step{Name: "train", Image: "pytorch/pytorch:2", Script: "python train.py", ComputeResources: &corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
			}}).Obj(),
			run:     run().Obj(),
			chained: true,
		},
		"chained-fallback-no-pod-level-resources": {
			task: wrappers.Task("ns", "t").Steps(
				v1.Step{Name: "build", Image: "golang:1", Script: "go build ./...", ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
				v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...", ComputeResources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			).Obj(),
			run:                 run().Obj(),
			chained:             true,
			noPodLevelResources: true,
		},
		"step-timeouts": {
			// A script step's timeout is its wrapper's (the timed wrapper,
			// its timeout and the grace period in seconds); a command
			// step's is the controller's, in an annotation; 0s is none.
			task: wrappers.Task("ns", "t").Results("digest").Steps(
				v1.Step{Name: "fetch", Image: "alpine/git:2", Command: []string{"git", "fetch"}, Timeout: v1.NewDuration(90 * time.Second)},
				v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...", OnError: v1.OnErrorContinue, Timeout: v1.NewDuration(1500 * time.Millisecond)},
				v1.Step{Name: "build", Image: "golang:1", Script: "go build ./...", Timeout: v1.NewDuration(10 * time.Minute)},
				v1.Step{Name: "push", Image: "alpine:3", Script: "echo sha256:0 >$(results.digest.path)", Timeout: v1.NewDuration(0)},
			).Obj(),
			run:      run().Obj(),
			deadline: ptr.To[int64](3600),
		},
		"chained-step-timeouts": {
			task: wrappers.Task("ns", "t").Results("digest").Steps(
				v1.Step{Name: "test", Image: "golang:1", Script: "go test ./...", OnError: v1.OnErrorContinue, Timeout: v1.NewDuration(time.Minute)},
				v1.Step{Name: "build", Image: "golang:1", Script: "go build ./...", Timeout: v1.NewDuration(10 * time.Minute)},
				v1.Step{Name: "push", Image: "alpine:3", Script: "echo sha256:0 >$(results.digest.path)"},
			).Obj(),
			run:      run().Obj(),
			deadline: ptr.To[int64](3600),
			chained:  true,
		},
		"long-names": {
			// A run name, a step name and a workspace name too long for a
			// label value, a container name and a volume name.
			task: wrappers.Task("ns", "t").Workspace(strings.Repeat("w", 63)).
				Steps(v1.Step{Name: "short", Image: "alpine:3", Command: []string{"true"}}).Step(strings.Repeat("s", 63), "alpine:3", "true").Obj(),
			run: wrappers.TaskRun("ns", strings.Repeat("r", 70), "t").Obj(),
		},
	}
	maps.Copy(cases, stepSettingsGoldenCases())
	maps.Copy(cases, sidecarGoldenCases())
	return cases
}
