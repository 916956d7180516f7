//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// typedParams: a run of array and object params with both timeouts shows
// each param's type and its value as JSON, and both timeouts; the Task's
// page shows the params' types and how its form takes their values.
func (dt *dashboardTest) typedParams(t *testing.T) {
	task := wrappers.Task(ns, "lint").Description("Lints files in an image").Params(
		v1.ParamSpec{Name: "files", Type: v1.ParamTypeArray, Description: "The files to lint, one argument each"},
		v1.ParamSpec{Name: "image", Type: v1.ParamTypeObject, Description: "Where the linter comes from",
			Properties: map[string]v1.PropertySpec{"repo": {}, "tag": {}},
			Default:    v1.NewObjectValue(map[string]string{"repo": "example.org/lint", "tag": "latest"})},
		v1.ParamSpec{Name: "mode", Default: v1.NewStringValue("strict")},
	).Steps(v1.Step{Name: "lint", Image: "alpine:3", Command: []string{"echo"}, Args: []string{"$(params.files[*])"},
		Env: []corev1.EnvVar{{Name: "REPO", Value: "$(params.image.repo)"}, {Name: "MODE", Value: "$(params.mode)"}}}).Obj()
	run := wrappers.TaskRun(ns, "lint-1", "lint").Params(v1.Param{Name: "files", Value: *v1.NewArrayValue("main.go", "cmd/app main.go")}).
		Timeout(30 * time.Minute).Obj()
	run.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
	create(t, dt.c, task, run)

	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/lint-1"), chromedp.WaitVisible(chromedp.ID("params-h")))
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=params-h] tbody tr")].map(r => r.innerText.replaceAll("\t", " | "))`)
	want := []string{
		`files | array | ["main.go","cmd/app main.go"] | run`,
		`image | object | {"repo":"example.org/lint","tag":"latest"} | default`,
		`mode | string | strict | default`,
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("the run's params:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	facts := eval[string](t, ctx, `document.querySelector("dl.facts").innerText`)
	for _, want := range []string{"Timeout\n30m0s", "Pending timeout\n5m0s"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the run's facts have no %q:\n%s", want, facts)
		}
	}
	screenshot(t, ctx, dt.shots, "run-typed")

	do(t, ctx, chromedp.Navigate(dt.d.url+"/tasks/default/lint"), chromedp.WaitVisible(chromedp.ID("start-form")))
	form := eval[string](t, ctx, `document.getElementById("start-form").innerText`)
	for _, want := range []string{"files (array, required)", `Give a JSON array of strings, ["a","b"], or items between commas, a,b.`,
		"image (object)", `Give a JSON object of strings, {"KEY":"VALUE"}, or KEY=VALUE pairs between commas, repo=VALUE,tag=VALUE.`} {
		if !strings.Contains(form, want) {
			t.Errorf("the start form has no %q:\n%s", want, form)
		}
	}
	if got := eval[string](t, ctx, `document.getElementById("param.image").value`); got != `{"repo":"example.org/lint","tag":"latest"}` {
		t.Errorf("the image field holds %q, want the default as JSON", got)
	}
	screenshot(t, ctx, dt.shots, "task-typed")
}
