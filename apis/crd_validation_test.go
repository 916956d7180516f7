package apis_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// validationCase is one object the API server must reject. When base is set,
// base is created first (it must be valid) and then updated with the invalid
// object, through the status subresource when status is true.
type validationCase struct {
	base   string
	obj    string
	status bool
	// field is the path the API server's message must name.
	field string
	// also is more the message must say, such as the limit; optional.
	also string
}

func TestAPIServerRejectsInvalidObjects(t *testing.T) {
	const (
		alphaTask = "apiVersion: minitask.dev/v1alpha1\nkind: Task\nmetadata: {name: t}\n"
		betaTask  = "apiVersion: minitask.dev/v1beta1\nkind: Task\nmetadata: {name: t}\n"
		alphaRun  = "apiVersion: minitask.dev/v1alpha1\nkind: TaskRun\nmetadata: {name: r}\n"
		betaRun   = "apiVersion: minitask.dev/v1beta1\nkind: TaskRun\nmetadata: {name: r}\n"
		oneStep   = "  steps: [{name: a, image: alpine}]\n"
	)
	longName := strings.Repeat("a", 64)
	manySteps := "spec:\n  steps:\n"
	for i := range 51 {
		manySteps += "  - {name: s" + itoa(i) + ", image: alpine}\n"
	}

	const lowercaseTime = "2024-05-01t10:00:00z"
	big := func(n int) string { return strings.Repeat("x", n) }

	cases := map[string]validationCase{
		"v1alpha1 Task with an empty steps list": {
			obj: alphaTask + "spec: {steps: []}", field: "spec.steps"},
		"v1alpha1 Task without spec": {
			obj: alphaTask, field: "spec"},
		"v1alpha1 Task with more than 50 steps": {
			obj: alphaTask + manySteps, field: "spec.steps"},
		"v1alpha1 Task with a step name that is not a DNS label": {
			obj: alphaTask + "spec:\n  steps: [{name: Build_1, image: alpine}]", field: "spec.steps[0].name"},
		"v1alpha1 Task with a step name over 63 characters": {
			obj: alphaTask + "spec:\n  steps: [{name: " + longName + ", image: alpine}]", field: "spec.steps[0].name"},
		"v1alpha1 Task with duplicate step names": {
			obj: alphaTask + "spec:\n  steps: [{name: a, image: alpine}, {name: a, image: busybox}]", field: "spec.steps[1]"},
		"v1alpha1 Task with a step missing its image": {
			obj: alphaTask + "spec:\n  steps: [{name: a}]", field: "spec.steps[0].image"},
		"v1beta1 Task with an empty image": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: ''}]", field: "spec.steps[0].image"},
		"v1beta1 Task without steps": {
			obj: betaTask + "spec: {description: nothing to do}", field: "spec.steps"},
		"v1beta1 Task with duplicate param names": {
			obj: betaTask + "spec:\n  params: [{name: p}, {name: p}]\n" + oneStep, field: "spec.params[1]"},
		"v1beta1 Task with a param name starting with a digit": {
			obj: betaTask + "spec:\n  params: [{name: 1p}]\n" + oneStep, field: "spec.params[0].name"},
		"v1alpha1 TaskRun without taskRef": {
			obj: alphaRun + "spec: {}", field: "spec.taskRef"},
		"v1alpha1 TaskRun changing taskRef after creation": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: b}", field: "spec.taskRef"},
		"v1alpha1 TaskRun status with an unknown phase": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: a}\nstatus: {phase: Done}",
			status: true, field: "status.phase"},
		"v1beta1 TaskRun without taskRef.name": {
			obj: betaRun + "spec: {taskRef: {}}", field: "spec.taskRef.name"},
		"v1beta1 TaskRun with a negative timeout": {
			obj: betaRun + "spec: {taskRef: {name: a}, timeout: -1m}", field: "spec.timeout"},
		"v1beta1 TaskRun with a timeout that is not a duration": {
			obj: betaRun + "spec: {taskRef: {name: a}, timeout: soon}", field: "spec.timeout"},
		"v1beta1 TaskRun with an unknown spec.status": {
			obj: betaRun + "spec: {taskRef: {name: a}, status: Stopped}", field: "spec.status"},
		"v1beta1 TaskRun with duplicate param names": {
			obj: betaRun + "spec: {taskRef: {name: a}, params: [{name: p, value: x}, {name: p, value: y}]}", field: "spec.params[1]"},
		"v1beta1 TaskRun changing taskRef.name after creation": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: b}}", field: "spec.taskRef"},
		"v1beta1 TaskRun changing params after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, params: [{name: p, value: x}]}",
			obj:  betaRun + "spec: {taskRef: {name: a}, params: [{name: p, value: y}]}", field: "spec.params"},
		"v1beta1 TaskRun adding a timeout after creation": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}, timeout: 1h}", field: "spec.timeout"},
		// Times the date-time format lets through but metav1.Time cannot decode.
		"v1alpha1 TaskRun status with a lower-case startTime": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: a}\nstatus: {startTime: " + lowercaseTime + "}",
			status: true, field: "status.startTime"},
		"v1alpha1 TaskRun status with a lower-case finishTime": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: a}\nstatus: {finishTime: " + lowercaseTime + "}",
			status: true, field: "status.finishTime"},
		"v1beta1 TaskRun status with a lower-case startTime": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {startTime: " + lowercaseTime + "}",
			status: true, field: "status.startTime"},
		"v1beta1 TaskRun status with a lower-case completionTime": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {completionTime: " + lowercaseTime + "}",
			status: true, field: "status.completionTime"},
		"v1beta1 TaskRun status with a lower-case step startedAt": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, startedAt: " + lowercaseTime + "}]}",
			status: true, field: "status.steps[0].startedAt"},
		"v1beta1 TaskRun status with a lower-case step finishedAt": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, finishedAt: " + lowercaseTime + "}]}",
			status: true, field: "status.steps[0].finishedAt"},
		"v1beta1 TaskRun status with a lower-case condition lastTransitionTime": {
			base: betaRun + "spec: {taskRef: {name: a}}",
			obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {conditions: [{type: Succeeded, status: 'True', reason: Succeeded, message: '', " +
				"lastTransitionTime: " + lowercaseTime + "}]}",
			status: true, field: "status.conditions[0].lastTransitionTime", also: "must be an RFC 3339 time"},
		"v1beta1 TaskRun status with a condition lastTransitionTime 25 hours ahead of UTC": {
			base: betaRun + "spec: {taskRef: {name: a}}",
			obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {conditions: [{type: Succeeded, status: 'True', reason: Succeeded, message: '', " +
				"lastTransitionTime: '2024-05-01T10:00:00+25:00'}]}",
			status: true, field: "status.conditions[0].lastTransitionTime", also: "must be an RFC 3339 time"},
		// Zone offsets the date-time format lets through but Go cannot read
		// (time zone offset hour out of range), and +24:00, which Go reads
		// but RFC 3339 refuses.
		"v1alpha1 TaskRun status with a startTime 25 hours ahead of UTC": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: a}\nstatus: {startTime: '2024-05-01T10:00:00+25:00'}",
			status: true, field: "status.startTime"},
		"v1alpha1 TaskRun status with a finishTime offset by 99 minutes": {
			base: alphaRun + "spec: {taskRef: a}", obj: alphaRun + "spec: {taskRef: a}\nstatus: {finishTime: '2024-05-01T10:00:00+23:99'}",
			status: true, field: "status.finishTime"},
		"v1beta1 TaskRun status with a startTime 25 hours ahead of UTC": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {startTime: '2024-05-01T10:00:00+25:00'}",
			status: true, field: "status.startTime"},
		"v1beta1 TaskRun status with a completionTime 24 hours ahead of UTC": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {completionTime: '2024-05-01T10:00:00+24:00'}",
			status: true, field: "status.completionTime"},
		"v1beta1 TaskRun status with a step finishedAt offset by 99:99": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, finishedAt: '2024-05-01T10:00:00-99:99'}]}",
			status: true, field: "status.steps[0].finishedAt"},
		"v1beta1 TaskRun status with an attempt startTime 25 hours ahead of UTC": {
			base:   betaRun + "spec: {taskRef: {name: a}}",
			obj:    betaRun + "spec: {taskRef: {name: a}}\nstatus: {attempts: [{podName: p, reason: PodFailed, startTime: '2024-05-01T10:00:00+25:00'}]}",
			status: true, field: "status.attempts[0].startTime"},
		// The Limits of API.md, each named with its limit.
		"v1alpha1 Task with a script over 64 KiB": {
			obj: alphaTask + "spec:\n  steps: [{name: a, image: alpine, script: " + big(65537) + "}]", field: "spec.steps[0].script", also: "65536"},
		"v1beta1 Task with a script over 64 KiB": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, script: " + big(65537) + "}]", field: "spec.steps[0].script", also: "65536"},
		"v1beta1 Task with a description over 4 KiB": {
			obj: betaTask + "spec:\n  description: " + big(4097) + "\n" + oneStep, field: "spec.description", also: "4096"},
		"v1beta1 Task with a param description over 4 KiB": {
			obj: betaTask + "spec:\n  params: [{name: p, description: " + big(4097) + "}]\n" + oneStep, field: "spec.params[0].description", also: "4096"},
		"v1beta1 Task with a param default over 64 KiB": {
			obj: betaTask + "spec:\n  params: [{name: p, default: " + big(65537) + "}]\n" + oneStep, field: "spec.params[0].default", also: "65536"},
		"v1beta1 TaskRun with a param value over 64 KiB": {
			obj: betaRun + "spec: {taskRef: {name: a}, params: [{name: p, value: " + big(65537) + "}]}", field: "spec.params[0].value", also: "65536"},
		"v1beta1 TaskRun changing its timeout's value after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, timeout: 10m}", obj: betaRun + "spec: {taskRef: {name: a}, timeout: 11m}",
			field: "spec.timeout", also: "timeout is immutable"},
		// Release 3's fields.
		"v1beta1 Task with a step that has both script and command": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, script: make, command: [make]}]", field: "spec.steps[0]",
			also: "command and args cannot be used with script"},
		"v1beta1 Task with a step that has both script and args": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, script: make, args: [all]}]", field: "spec.steps[0]",
			also: "command and args cannot be used with script"},
		"v1beta1 Task with more than 100 env entries in a step": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, env: [" + flowList(101, func(n string) string { return "{name: V" + n + ", value: x}" }) + "]}]", field: "spec.steps[0].env", also: "100"},
		"v1beta1 Task with duplicate env names in a step": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, env: [{name: X, value: a}, {name: X, value: b}]}]", field: "spec.steps[0].env[1]"},
		"v1beta1 Task with more than 10 workspaces": {
			obj: betaTask + "spec:\n  workspaces: [" + flowList(11, func(n string) string { return "{name: w" + n + "}" }) + "]\n" + oneStep, field: "spec.workspaces", also: "10"},
		"v1beta1 Task with duplicate workspace names": {
			obj: betaTask + "spec:\n  workspaces: [{name: w}, {name: w}]\n" + oneStep, field: "spec.workspaces[1]"},
		"v1beta1 Task with a workspace name that is not a DNS label": {
			obj: betaTask + "spec:\n  workspaces: [{name: My_Source}]\n" + oneStep, field: "spec.workspaces[0].name"},
		"v1beta1 Task with a relative workspace mountPath": {
			obj: betaTask + "spec:\n  workspaces: [{name: w, mountPath: src}]\n" + oneStep, field: "spec.workspaces[0].mountPath"},
		"v1beta1 Task with a workspace description over 4 KiB": {
			obj: betaTask + "spec:\n  workspaces: [{name: w, description: " + big(4097) + "}]\n" + oneStep, field: "spec.workspaces[0].description", also: "4096"},
		"v1beta1 TaskRun binding a workspace to two sources": {
			obj: betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {}, secret: {secretName: s}}]}", field: "spec.workspaces[0]",
			also: "exactly one of emptyDir, persistentVolumeClaim, configMap and secret must be set"},
		"v1beta1 TaskRun binding a workspace to no source": {
			obj: betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w}]}", field: "spec.workspaces[0]",
			also: "exactly one of emptyDir, persistentVolumeClaim, configMap and secret must be set"},
		"v1beta1 TaskRun binding a workspace twice": {
			obj: betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {}}, {name: w, emptyDir: {}}]}", field: "spec.workspaces[1]"},
		"v1beta1 TaskRun with a serviceAccountName that is not a DNS name": {
			obj: betaRun + "spec: {taskRef: {name: a}, serviceAccountName: Builder_1}", field: "spec.serviceAccountName"},
		"v1beta1 TaskRun changing serviceAccountName after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, serviceAccountName: a}", obj: betaRun + "spec: {taskRef: {name: a}, serviceAccountName: b}",
			field: "spec.serviceAccountName", also: "serviceAccountName is immutable"},
		"v1beta1 TaskRun adding a serviceAccountName after creation": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}, serviceAccountName: b}",
			field: "spec.serviceAccountName", also: "serviceAccountName is immutable"},
		"v1beta1 TaskRun changing workspaces after creation": {
			base:  betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {}}]}",
			obj:   betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, persistentVolumeClaim: {claimName: c}}]}",
			field: "spec.workspaces", also: "workspaces are immutable"},
		"v1beta1 TaskRun changing an emptyDir's sizeLimit after creation": {
			base:  betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {sizeLimit: 1Gi}}]}",
			obj:   betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {sizeLimit: 2Gi}}]}",
			field: "spec.workspaces", also: "workspaces are immutable"},
		"v1beta1 TaskRun adding a workspace after creation": {
			base:  betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {}}]}",
			obj:   betaRun + "spec: {taskRef: {name: a}, workspaces: [{name: w, emptyDir: {}}, {name: x, emptyDir: {}}]}",
			field: "spec.workspaces", also: "workspaces are immutable"},
		"v1beta1 TaskRun changing podTemplate after creation": {
			base:  betaRun + "spec: {taskRef: {name: a}, podTemplate: {nodeSelector: {pool: a}}}",
			obj:   betaRun + "spec: {taskRef: {name: a}, podTemplate: {nodeSelector: {pool: b}}}",
			field: "spec.podTemplate", also: "podTemplate is immutable"},
		"v1beta1 TaskRun removing podTemplate after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, podTemplate: {}}", obj: betaRun + "spec: {taskRef: {name: a}}",
			field: "spec.podTemplate", also: "podTemplate is immutable"},
		// Release 3's run semantics.
		"v1beta1 Task with onError: continue on a command step": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, command: [make], onError: continue}]", field: "spec.steps[0].onError",
			also: "onError: continue needs a script"},
		"v1beta1 Task with an unknown onError": {
			obj: betaTask + "spec:\n  steps: [{name: a, image: alpine, script: make, onError: retry}]", field: "spec.steps[0].onError"},
		"v1beta1 Task with more than 16 results": {
			obj: betaTask + "spec:\n  results: [" + flowList(17, func(n string) string { return "{name: r" + n + "}" }) + "]\n" + oneStep, field: "spec.results", also: "16"},
		"v1beta1 Task with a result description over 4 KiB": {
			obj: betaTask + "spec:\n  results: [{name: r, description: " + big(4097) + "}]\n" + oneStep, field: "spec.results[0].description", also: "4096"},
		"v1beta1 Task with a result name that is not a param name": {
			obj: betaTask + "spec:\n  results: [{name: 1r}]\n" + oneStep, field: "spec.results[0].name"},
		"v1beta1 TaskRun with more than 10 retries": {
			obj: betaRun + "spec: {taskRef: {name: a}, retries: 11}", field: "spec.retries", also: "10"},
		"v1beta1 TaskRun with negative retries": {
			obj: betaRun + "spec: {taskRef: {name: a}, retries: -1}", field: "spec.retries"},
		"v1beta1 TaskRun retrying on an unknown failure": {
			obj: betaRun + "spec: {taskRef: {name: a}, retryOn: [TaskRunTimeout]}", field: "spec.retryOn[0]"},
		"v1beta1 TaskRun with a negative ttlSecondsAfterFinished": {
			obj: betaRun + "spec: {taskRef: {name: a}, ttlSecondsAfterFinished: -1}", field: "spec.ttlSecondsAfterFinished"},
		"v1beta1 TaskRun with a ttlSecondsAfterFinished past int32": {
			obj: betaRun + "spec: {taskRef: {name: a}, ttlSecondsAfterFinished: 2147483648}", field: "spec.ttlSecondsAfterFinished", also: "2147483647"},
		"v1beta1 TaskRun status with a step exitCode past int32": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, exitCode: 2147483648}]}",
			status: true, field: "status.steps[0].exitCode", also: "2147483647"},
		"v1beta1 TaskRun status with a step exitCode below int32": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, exitCode: -2147483649}]}",
			status: true, field: "status.steps[0].exitCode", also: "-2147483648"},
		"v1beta1 TaskRun changing retries after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, retries: 1}", obj: betaRun + "spec: {taskRef: {name: a}, retries: 2}",
			field: "spec.retries", also: "retries is immutable"},
		"v1beta1 TaskRun changing retryOn after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, retries: 1, retryOn: [PodFailed]}", obj: betaRun + "spec: {taskRef: {name: a}, retries: 1, retryOn: [StepFailed]}",
			field: "spec.retryOn", also: "retryOn is immutable"},
		"v1beta1 TaskRun adding a retryOn after creation": {
			base: betaRun + "spec: {taskRef: {name: a}, retries: 1}", obj: betaRun + "spec: {taskRef: {name: a}, retries: 1, retryOn: [StepFailed]}",
			field: "spec.retryOn", also: "retryOn is immutable"},
		"v1beta1 TaskRun adding a ttlSecondsAfterFinished after creation": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}, ttlSecondsAfterFinished: 60}",
			field: "spec.ttlSecondsAfterFinished", also: "ttlSecondsAfterFinished is immutable"},
		"v1beta1 TaskRun status with an unknown step state": {
			base: betaRun + "spec: {taskRef: {name: a}}", obj: betaRun + "spec: {taskRef: {name: a}}\nstatus: {steps: [{name: a, state: Sleeping}]}",
			status: true, field: "status.steps[0].state"},
	}

	ctx := context.Background()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			obj := mustUnstructured(t, tc.obj, ns)
			var err error
			if tc.base == "" {
				err = env.Client.Create(ctx, obj)
			} else {
				base := mustUnstructured(t, tc.base, ns)
				if err := env.Client.Create(ctx, base); err != nil {
					t.Fatalf("creating the valid base object: %v", err)
				}
				obj.SetResourceVersion(base.GetResourceVersion())
				if tc.status {
					err = env.Client.Status().Update(ctx, obj)
				} else {
					err = env.Client.Update(ctx, obj)
				}
			}
			if err == nil {
				t.Fatalf("the API server accepted the object; want it rejected naming %s", tc.field)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error naming %s, got: %v", tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name the field %q: %v", tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.also) {
				t.Errorf("error does not say %q: %.2000v", tc.also, err)
			}
		})
	}
}

// TestAPIServerAllowsCancellingARun pins the one spec change a TaskRun allows.
func TestAPIServerAllowsCancellingARun(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	run := mustUnstructured(t, "apiVersion: minitask.dev/v1beta1\nkind: TaskRun\nmetadata: {name: r}\n"+
		"spec: {taskRef: {name: a}, params: [{name: p, value: x}], timeout: 1h}", ns)
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	if err := unstructured.SetNestedField(run.Object, "Cancelled", "spec", "status"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatalf("setting spec.status: Cancelled was rejected: %v", err)
	}
}

// TestAPIServerComparesTimeoutsByValue: a timeout written another way is
// the same timeout, so rewriting 10m as 10m0s (as conversion once did) or
// as 600s is no change the immutability rule refuses.
func TestAPIServerComparesTimeoutsByValue(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	run := mustUnstructured(t, "apiVersion: minitask.dev/v1beta1\nkind: TaskRun\nmetadata: {name: r}\n"+
		"spec: {taskRef: {name: a}, timeout: 10m}", ns)
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	for _, text := range []string{"10m0s", "600s", "10m"} {
		if err := unstructured.SetNestedField(run.Object, text, "spec", "timeout"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Update(ctx, run); err != nil {
			t.Errorf("rewriting timeout 10m as %s was rejected: %v", text, err)
		}
	}
}

func mustUnstructured(t *testing.T, doc, namespace string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("parsing test object: %v\n%s", err, doc)
	}
	u.SetNamespace(namespace)
	return u
}

// flowList is n YAML flow-style entries, the i-th made by entry from a
// name unique in the list.
func flowList(n int, entry func(name string) string) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = entry(itoa(i))
	}
	return strings.Join(entries, ", ")
}

// itoa names the i-th generated step with two letters (aa, ab, ...).
func itoa(i int) string {
	return string(rune('a'+i/26)) + string(rune('a'+i%26))
}

// TestAPIServerAcceptsEveryRelease3Field creates a Task and a TaskRun that
// use every field release 3 added, and then changes the run's metadata and
// cancels it: the immutability rules must compare the new fields by value,
// not refuse every update of a run that has them.
func TestAPIServerAcceptsEveryRelease3Field(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	task := mustUnstructured(t, `apiVersion: minitask.dev/v1beta1
kind: Task
metadata: {name: build}
spec:
  workspaces:
  - {name: source, description: The checked-out repository, mountPath: /src, readOnly: false}
  - {name: cache}
  steps:
  - name: fetch
    image: alpine:3
    script: echo hi > $(workspaces.source.path)/hi
    env:
    - {name: GOFLAGS, value: -mod=mod}
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: git, key: token}}
    envFrom: [{configMapRef: {name: build-settings}}, {prefix: S_, secretRef: {name: s}}]
    computeResources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}
  - name: build
    image: golang:1.26
    command: [go]
    args: [build, ./...]
    workingDir: $(workspaces.source.path)
`, ns)
	if err := env.Client.Create(ctx, task); err != nil {
		t.Fatalf("creating a Task with every release 3 field: %v", err)
	}
	run := mustUnstructured(t, `apiVersion: minitask.dev/v1beta1
kind: TaskRun
metadata: {name: build-1}
spec:
  taskRef: {name: build}
  workspaces:
  - {name: source, persistentVolumeClaim: {claimName: cache}}
  - {name: cache, emptyDir: {sizeLimit: 1Gi}}
  - {name: settings, configMap: {name: settings}}
  - {name: creds, secret: {secretName: git-creds}}
  serviceAccountName: builder
  podTemplate:
    nodeSelector: {pool: ci}
    tolerations: [{key: ci, operator: Exists, effect: NoSchedule}]
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}]
    securityContext: {runAsNonRoot: true, runAsUser: 1000}
    imagePullSecrets: [{name: registry}]
    priorityClassName: ci-low
`, ns)
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("creating a TaskRun with every release 3 field: %v", err)
	}
	run.SetLabels(map[string]string{"team": "a"})
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatalf("labelling the run was refused: %v", err)
	}
	if err := unstructured.SetNestedField(run.Object, "Cancelled", "spec", "status"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatalf("cancelling the run was refused: %v", err)
	}
}
