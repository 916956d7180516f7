//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// cancelAndRerun: the run page's Cancel and Rerun buttons, reached and
// pressed from the keyboard, cancel the run (its logs kept) and start a new
// one with its settings.
func (dt *dashboardTest) cancelAndRerun(t *testing.T) {
	ctx := tab(t, dt.browser)
	create(t, dt.c, wrappers.TaskRun(ns, "long-1", "long").Param("greeting", "hi").Label("team", "web").Obj())
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/long-1"))
	waitInPage(t, ctx, "long-1 to be Running", `document.getElementById("run-status").textContent === "Running"`, time.Minute)
	waitInPage(t, ctx, "long-1's log", `document.querySelectorAll("#log-wait .line").length > 0`, 20*time.Second)

	pressUntilFocused(t, ctx, "cancel", kb.Enter)
	waitInPage(t, ctx, "the page to say the cancel was asked for", `document.querySelector(".flash") && location.search.includes("done=cancelled")`, 10*time.Second)
	waitInPage(t, ctx, "long-1 to be Failed(TaskRunCancelled)", `document.getElementById("run-status").textContent === "Failed(TaskRunCancelled)"`, time.Minute)
	waitInPage(t, ctx, "long-1's log, kept after the cancel", `document.querySelectorAll("#log-wait .line").length > 0 && document.getElementById("log-state").textContent.includes("end")`, 20*time.Second)
	screenshot(t, ctx, dt.shots, "run-cancelled")

	pressUntilFocused(t, ctx, "rerun", kb.Enter)
	waitInPage(t, ctx, "the new run's page", `location.pathname.startsWith("/runs/default/long-") && location.pathname !== "/runs/default/long-1"`, 10*time.Second)
	path := eval[string](t, ctx, "location.pathname")
	name := strings.TrimPrefix(path, "/runs/default/")
	again := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, again); err != nil {
		t.Fatalf("the rerun %s: %v", name, err)
	}
	if again.Spec.TaskRef.Name != "long" || !slices.Equal(again.Spec.Params, []v1beta1.Param{{Name: "greeting", Value: "hi"}}) ||
		again.Labels["team"] != "web" || again.Spec.Status != "" {
		t.Errorf("the rerun %s has spec %+v and labels %v; want long-1's settings, not its cancel request", name, again.Spec, again.Labels)
	}
	dt.cancelByAPI(t, name)
}

// cancelByAPI cancels a run the test no longer needs running.
func (dt *dashboardTest) cancelByAPI(t *testing.T, name string) {
	t.Helper()
	run := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Spec.Status = v1beta1.TaskRunSpecStatusCancelled
	if err := dt.c.client.Patch(context.Background(), run, patch); err != nil {
		t.Fatal(err)
	}
}

// v1alpha1YAML: the YAML page shows a v1beta1 run as v1alpha1 serves it,
// startFilterDelete: a run started from a Task's form, the runs filtered
// and a run deleted, each from the keyboard alone.
func (dt *dashboardTest) startFilterDelete(t *testing.T) {
	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/tasks/default/long"), chromedp.WaitVisible(chromedp.ID("start-form")))
	screenshot(t, ctx, dt.shots, "task")
	pressUntilFocused(t, ctx, "param.greeting", "typed")
	pressUntilFocused(t, ctx, "start", kb.Enter)
	waitInPage(t, ctx, "the started run's page", `location.pathname.startsWith("/runs/default/long-") && location.search.includes("done=started")`, 10*time.Second)
	name := strings.TrimPrefix(eval[string](t, ctx, "location.pathname"), "/runs/default/")
	started := &v1beta1.TaskRun{}
	if err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, started); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(started.Spec.Params, []v1beta1.Param{{Name: "greeting", Value: "typed"}}) {
		t.Errorf("the run started from the form has params %v, want greeting=typed", started.Spec.Params)
	}
	dt.cancelByAPI(t, name)

	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs"), chromedp.WaitVisible(chromedp.ID("runs")))
	pressUntilFocused(t, ctx, "f-task", "slow")
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitInPage(t, ctx, "the filtered list", `location.search.includes("task=slow")`, 10*time.Second)
	if rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#runs-body tr")].map(r => r.id)`); !slices.Equal(rows, []string{"run/default/logs-1", "run/default/live-1"}) {
		t.Errorf("the runs of Task slow: %v, want logs-1 and live-1", rows)
	}

	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/xss-msg"), chromedp.WaitVisible(chromedp.ID("delete")))
	pressUntilFocused(t, ctx, "delete", kb.Enter)
	waitInPage(t, ctx, "the runs page saying xss-msg is deleted", `location.pathname === "/runs" && document.querySelector(".flash").textContent.includes("xss-msg")`, 10*time.Second)
	err := dt.c.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "xss-msg"}, &v1beta1.TaskRun{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("xss-msg after Delete: %v, want NotFound", err)
	}
}
