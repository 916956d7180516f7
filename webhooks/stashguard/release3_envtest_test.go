package stashguard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
	"github.com/minitask-dev/minitask/webhooks/stashguard"
)

// The guard's tests of the fields release 3 added, run by
// TestThroughAPIServer.

// everyStepField is a step with each field release 3 added, small.
func everyStepField(name string) v1beta1.Step {
	return v1beta1.Step{Name: name, Image: "golang:1.26", Command: []string{"go"}, Args: []string{"build", "./..."},
		WorkingDir: "/workspace/source",
		Env: []corev1.EnvVar{{Name: "GOFLAGS", Value: "-mod=mod"},
			{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "git"}, Key: "token"}}},
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
				Resource: "limits.cpu", Divisor: resource.MustParse("1m")}}}},
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
		ComputeResources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			Claims:   []corev1.ResourceClaim{{Name: "gpu"}}},
	}
}

// testSmallRelease3WritesSkipTheWebhook: a small v1beta1 write carrying any
// of release 3's fields does not call the guard, but for a run's
// podTemplate.affinity and podTemplate.securityContext, whose size the
// match condition does not bound: those writes always do.
func testSmallRelease3WritesSkipTheWebhook(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	binding := func(name string) v1beta1.WorkspaceBinding { return v1beta1.WorkspaceBinding{Name: name} }
	run := func(name string, edit func(*v1beta1.TaskRunSpec)) *v1beta1.TaskRun {
		r := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
		edit(&r.Spec)
		return r
	}
	skipping := map[string]client.Object{
		"a Task with workspaces and every step field": &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns},
			Spec: v1beta1.TaskSpec{
				Workspaces: []v1beta1.WorkspaceDeclaration{{Name: "source", Description: "d", MountPath: "/src", ReadOnly: ptr.To(false)}},
				Steps:      []v1beta1.Step{everyStepField("build"), everyStepField("test")}}},
		"a run binding a workspace to each source": run("bindings", func(s *v1beta1.TaskRunSpec) {
			emptyDir, pvc, configMap, secret := binding("a"), binding("b"), binding("c"), binding("d")
			emptyDir.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}
			pvc.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache"}
			configMap.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"},
				Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}
			secret.Secret = &corev1.SecretVolumeSource{SecretName: "s", Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}
			s.Workspaces = []v1beta1.WorkspaceBinding{emptyDir, pvc, configMap, secret}
		}),
		"a run with a ServiceAccount":     run("account", func(s *v1beta1.TaskRunSpec) { s.ServiceAccountName = "default" }),
		"a run with an empty podTemplate": run("empty-template", func(s *v1beta1.TaskRunSpec) { s.PodTemplate = &v1beta1.PodTemplate{} }),
		"a run with a podTemplate of bounded fields": run("template", func(s *v1beta1.TaskRunSpec) {
			s.PodTemplate = &v1beta1.PodTemplate{NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"},
				Tolerations:      []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}, PriorityClassName: "batch"}
		}),
	}
	sent := map[string]client.Object{
		"a run with podTemplate.affinity": run("affinity", func(s *v1beta1.TaskRunSpec) {
			s.PodTemplate = &v1beta1.PodTemplate{Affinity: &corev1.Affinity{}}
		}),
		"a run with podTemplate.securityContext": run("security", func(s *v1beta1.TaskRunSpec) {
			s.PodTemplate = &v1beta1.PodTemplate{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}}
		}),
	}
	for name, obj := range skipping {
		t.Run(name, func(t *testing.T) {
			before := guardCalls(t)
			create(t, obj)
			obj.SetLabels(map[string]string{"touched": "v1beta1"})
			if err := env.Client.Update(ctx, obj); err != nil {
				t.Fatalf("updating: %v", err)
			}
			if calls := guardCalls(t) - before; calls != 0 {
				t.Errorf("a create and an update made %v calls to the guards, want none", calls)
			}
		})
	}
	for name, obj := range sent {
		t.Run(name, func(t *testing.T) {
			before := guardCalls(t)
			create(t, obj)
			if calls := guardCalls(t) - before; calls != 1 {
				t.Errorf("a create made %v calls to the guards, want 1", calls)
			}
		})
	}
}

func guardCalls(t *testing.T) float64 {
	return webhookRequests(t, stashguard.TaskPath) + webhookRequests(t, stashguard.TaskRunPath)
}

// testBigRelease3WritesAreRefused: each of release 3's fields can take the
// stash past the limit in text that JSON escapes to six bytes a character;
// such writes reach the guard and are refused with the size.
func testBigRelease3WritesAreRefused(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const n = conversion.MaxAnnotationsBytes / 6
	step := func(edit func(*v1beta1.Step)) *v1beta1.Task {
		s := v1beta1.Step{Name: "s", Image: "alpine"}
		edit(&s)
		return &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns}, Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{s}}}
	}
	run := func(edit func(*v1beta1.TaskRunSpec)) *v1beta1.TaskRun {
		r := &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}, Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}}}
		edit(&r.Spec)
		return r
	}
	manyEnv := make([]corev1.EnvVar, 100)
	for i := range manyEnv {
		manyEnv[i] = corev1.EnvVar{Name: fmt.Sprintf("V%02d", i), ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: strings.Repeat("<", n/100)}, Key: "k"}}}
	}
	// Fields whose maximum length keeps one short enough take many.
	manySteps := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns}}
	for i := range 50 {
		manySteps.Spec.Steps = append(manySteps.Spec.Steps, v1beta1.Step{Name: fmt.Sprintf("s%02d", i), Image: "alpine",
			WorkingDir: "/" + strings.Repeat("<", 4095)})
	}
	manyWorkspaces := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: ns},
		Spec: v1beta1.TaskSpec{Steps: []v1beta1.Step{{Name: "s", Image: "alpine"}}}}
	for i := range 10 {
		manyWorkspaces.Spec.Workspaces = append(manyWorkspaces.Spec.Workspaces, v1beta1.WorkspaceDeclaration{Name: fmt.Sprintf("w%d", i),
			Description: strings.Repeat("<", 4096), MountPath: "/" + strings.Repeat("<", 4095)})
	}
	for name, obj := range map[string]client.Object{
		"a step's env value":       step(func(s *v1beta1.Step) { s.Env = []corev1.EnvVar{{Name: "HTML", Value: strings.Repeat("<", n)}} }),
		"a step's env secret name": step(func(s *v1beta1.Step) { s.Env = manyEnv }),
		"a step's command":         step(func(s *v1beta1.Step) { s.Command = []string{strings.Repeat("<", n/2), strings.Repeat("<", n/2+1)} }),
		"a step's args":            step(func(s *v1beta1.Step) { s.Args = []string{strings.Repeat("\x01", n)} }),
		"50 steps' workingDir":     manySteps,
		"a step's envFrom prefix": step(func(s *v1beta1.Step) {
			s.EnvFrom = []corev1.EnvFromSource{{Prefix: strings.Repeat("<", n), SecretRef: &corev1.SecretEnvSource{}}}
		}),
		"10 workspaces' description and mountPath": manyWorkspaces,
		"a run's nodeSelector": run(func(s *v1beta1.TaskRunSpec) {
			s.PodTemplate = &v1beta1.PodTemplate{NodeSelector: map[string]string{"html": strings.Repeat("<", n)}}
		}),
		"a run's toleration": run(func(s *v1beta1.TaskRunSpec) {
			s.PodTemplate = &v1beta1.PodTemplate{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: strings.Repeat("<", n)}}}
		}),
		"a run's configMap items": run(func(s *v1beta1.TaskRunSpec) {
			s.Workspaces = []v1beta1.WorkspaceBinding{{Name: "w", ConfigMap: &corev1.ConfigMapVolumeSource{
				Items: []corev1.KeyToPath{{Key: "k", Path: strings.Repeat("<", n)}}}}}
		}),
	} {
		t.Run(name, func(t *testing.T) {
			checkInvalid(t, env.Client.Create(ctx, obj), "metadata.annotations: Invalid value: read through minitask.dev/v1alpha1", "more than the API server's limit of 262144")
		})
	}
}

// testForgedRelease3Stash: a hand-written stash that sets one of release
// 3's fields to something v1beta1 refuses is refused on a v1alpha1 write,
// as the API server would refuse it through v1beta1.
func testForgedRelease3Stash(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for name, tc := range map[string]struct {
		obj  client.Object
		want []string
	}{
		"a step with both script and command": {
			obj:  forgedTask(ns, "script-and-command", `{"v1beta1":{"spec":{"steps":[{"name":"build","command":["go"]}]}}}`),
			want: []string{"spec.steps[0]: Invalid value", "command and args cannot be used with script"},
		},
		"two env vars of one name": {
			obj:  forgedTask(ns, "env-twice", `{"v1beta1":{"spec":{"steps":[{"name":"build","env":[{"name":"A"},{"name":"A"}]}]}}}`),
			want: []string{`spec.steps[0].env[1]: Duplicate value: {"name":"A"}`},
		},
		"more env vars than allowed": {
			obj:  forgedTask(ns, "env-many", `{"v1beta1":{"spec":{"steps":[{"name":"build","env":[`+manyEnvJSON(101)+`]}]}}}`),
			want: []string{"spec.steps[0].env: Too many: 101: must have at most 100 items"},
		},
		"a workspace with a relative mountPath": {
			obj:  forgedTask(ns, "relative", `{"v1beta1":{"spec":{"workspaces":[{"name":"src","mountPath":"src"}]}}}`),
			want: []string{`spec.workspaces[0].mountPath: Invalid value: "src"`},
		},
		"a workspace binding with two sources": {
			obj:  forgedRun(ns, "two-sources", `{"v1beta1":{"spec":{"workspaces":[{"name":"w","emptyDir":{},"secret":{"secretName":"s"}}]}}}`),
			want: []string{"spec.workspaces[0]: Invalid value", "exactly one of emptyDir, persistentVolumeClaim, configMap and secret must be set"},
		},
		"a ServiceAccount name that is no name": {
			obj:  forgedRun(ns, "bad-account", `{"v1beta1":{"spec":{"serviceAccountName":"Not_A_Name"}}}`),
			want: []string{`spec.serviceAccountName: Invalid value: "Not_A_Name"`},
		},
		"a stash that does not decode is dropped whole, not refused": {
			obj: forgedTask(ns, "bad-quantity", `{"v1beta1":{"spec":{"steps":[{"name":"build","computeResources":{"requests":{"cpu":"lots"}}}]}}}`),
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkInvalid(t, err, tc.want...)
		})
	}

	// On an update, the run's new fields are immutable like the rest of its spec.
	create(t, &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: "t"}, ServiceAccountName: "default", PodTemplate: &v1beta1.PodTemplate{}}})
	spoke := &v1alpha1.TaskRun{}
	get(t, ns, "r", spoke)
	metav1.SetMetaDataAnnotation(&spoke.ObjectMeta, conversion.AnnotationConversionData,
		`{"v1beta1":{"spec":{"serviceAccountName":"builder","workspaces":[{"name":"w","emptyDir":{}}]}}}`)
	checkInvalid(t, env.Client.Update(ctx, spoke), "serviceAccountName is immutable", "workspaces are immutable", "podTemplate is immutable")
}

func manyEnvJSON(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"V%d"}`, i)
	}
	return strings.Join(items, ",")
}

// testMaximalTaskPassesTheMatchCondition: a Task at every CRD limit on the
// lists the match condition walks (50 steps of 100 env vars and 256 args
// each), small enough that its stash fits, evaluates within CEL's cost
// budget: an error there would refuse the write (failurePolicy Fail).
func testMaximalTaskPassesTheMatchCondition(t *testing.T) {
	ns := env.Namespace(t)
	task := &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: "maximal", Namespace: ns}}
	for i := range 50 {
		s := v1beta1.Step{Name: fmt.Sprintf("s%02d", i), Image: "alpine", Args: make([]string, 256)}
		for j := range 100 {
			s.Env = append(s.Env, corev1.EnvVar{Name: fmt.Sprintf("V%02d", j)})
		}
		s.ComputeResources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		task.Spec.Steps = append(task.Spec.Steps, s)
	}
	before := guardCalls(t)
	if err := env.Client.Create(context.Background(), task); err != nil {
		t.Fatalf("creating a Task at the CRD's limits: %.2000v", err)
	}
	if calls := guardCalls(t) - before; calls != 1 {
		t.Errorf("its create made %v calls to the guards, want 1 (its bound passes the limit)", calls)
	}
}

// forgedTask is a v1alpha1 Task in ns whose one step, build, runs a script,
// with stash as its conversion annotation.
func forgedTask(ns, name, stash string) *v1alpha1.Task {
	return &v1alpha1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Annotations: map[string]string{conversion.AnnotationConversionData: stash}},
		Spec: v1alpha1.TaskSpec{Steps: []v1alpha1.Step{{Name: "build", Image: "golang:1.26", Script: "go build ./..."}}}}
}

// forgedRun is a v1alpha1 TaskRun in ns with stash as its conversion
// annotation.
func forgedRun(ns, name, stash string) *v1alpha1.TaskRun {
	return &v1alpha1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Annotations: map[string]string{conversion.AnnotationConversionData: stash}}, Spec: v1alpha1.TaskRunSpec{TaskRef: "t"}}
}
