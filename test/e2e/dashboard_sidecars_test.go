//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// sidecars: a finished run with a sidecar shows it on its page, its state
// and readiness in the Sidecars table, and its log after the steps'
// (kwok's, which plays every container's log the same).
func (dt *dashboardTest) sidecars(t *testing.T) {
	task := wrappers.Task(ns, "with-db").Description("Tests against a database beside them").
		Step("test", "alpine:3", "echo testing against db").Obj()
	task.Spec.Sidecars = []v1.Sidecar{{Name: "db", Image: "postgres:17", Script: "echo db up"}}
	create(t, dt.c, task, wrappers.TaskRun(ns, "with-db-1", "with-db").Obj())
	waitFor(t, time.Minute, "the sidecar run to succeed with its sidecar's state", func(ctx context.Context) error {
		run := &v1.TaskRun{}
		if err := dt.c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "with-db-1"}, run); err != nil {
			return err
		}
		if outcome(run) != "True/Succeeded" || len(run.Status.Sidecars) != 1 {
			return fmt.Errorf("it is %s, status.sidecars %+v", outcome(run), run.Status.Sidecars)
		}
		return nil
	})

	ctx := tab(t, dt.browser)
	do(t, ctx, chromedp.Navigate(dt.d.url+"/runs/default/with-db-1"), chromedp.WaitVisible(chromedp.ID("sidecars-h")))
	row := eval[string](t, ctx, `document.getElementById("sidecar-db").innerText.replaceAll("\t", " | ")`)
	if !strings.HasPrefix(row, "db | ") {
		t.Errorf("the Sidecars table's row of db reads %q", row)
	}
	waitInPage(t, ctx, "the sidecar's log", `document.getElementById("log-sidecar.db").textContent.length > 0`, 10*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("log-sidecar.db").textContent`); !strings.Contains(got, "(kwok)") {
		t.Errorf("the sidecar's log panel reads %q", got)
	}
	screenshot(t, ctx, dt.shots, "run-sidecars")
}
