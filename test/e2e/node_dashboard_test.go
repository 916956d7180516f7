//go:build e2e && e2enode

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestNodeDashboardLogs: on a real node, a run's page shows a step's log
// line by line as the step writes it, which kwok (one fixed two-line log
// for every container) cannot show. The step prints six lines a second
// apart; the page, opened while the step runs, appends all six, in order,
// an element each, over seconds, with no reload, and they are the lines
// the container wrote (the Pod logs API says so). A second step, waiting
// its turn in the chained Pod meanwhile, shows its own line after them, and
// the page says the Pod is chained.
func TestNodeDashboardLogs(t *testing.T) {
	c := newNodeCluster(t, "node-dashboard")
	startNodeManager(t, c)
	const step, after = "count", "done"
	task := wrappers.Task(ns, "lines").Description("Prints a line a second, then says it is done").
		Step(step, alpineImage, `for i in 1 2 3 4 5 6; do echo "line $i"; sleep 1; done`).
		Step(after, alpineImage, `echo counted`).Obj()
	create(t, c, task)
	d := startDashboard(t, c)
	ctx := tab(t, newBrowser(t))
	onEveryPage(t, ctx, logRecorder)

	create(t, c, wrappers.TaskRun(ns, "lines-1", task.Name).Obj())
	// Open the page once the step runs, so that the lines still to come
	// can only arrive by the page following the log.
	waitFor(t, 2*time.Minute, "step "+step+" of lines-1 to run", func(ctx context.Context) error {
		run := &v1beta1.TaskRun{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "lines-1"}, run); err != nil {
			return err
		}
		for _, s := range run.Status.Steps {
			if s.Name == step && s.State == v1beta1.StepRunning {
				return nil
			}
		}
		return fmt.Errorf("its steps are %+v", run.Status.Steps)
	})
	opened := time.Now()
	do(t, ctx, chromedp.Navigate(d.url+"/runs/default/lines-1"), chromedp.WaitVisible(chromedp.ID("run-live")))
	// A reload would lose this mark.
	eval[bool](t, ctx, "window.__mark = true")
	waitInPage(t, ctx, "the page to show lines-1 Succeeded", `document.getElementById("run-status").textContent === "Succeeded"`, time.Minute)
	waitInPage(t, ctx, "the logs to be read to their end", `document.getElementById("log-state").textContent.includes("end")`, 10*time.Second)
	if !eval[bool](t, ctx, "window.__mark === true") {
		t.Fatal("the page was reloaded")
	}

	var lines []logLine
	if err := json.Unmarshal([]byte(eval[string](t, ctx, "JSON.stringify(window.__lines)")), &lines); err != nil {
		t.Fatal(err)
	}
	byStep := map[string][]logLine{}
	for _, l := range lines {
		if l.Step != step && l.Step != after {
			t.Errorf("the page appended %q to step %q's log; the run has only steps %q and %q", l.Text, l.Step, step, after)
		}
		byStep[l.Step] = append(byStep[l.Step], l)
	}
	texts := func(lines []logLine) []string {
		var texts []string
		for _, l := range lines {
			texts = append(texts, strings.TrimSuffix(l.Text, "\n"))
		}
		return texts
	}
	counted := byStep[step] // with when each line appeared
	want := []string{"line 1", "line 2", "line 3", "line 4", "line 5", "line 6"}
	if got := texts(counted); !slices.Equal(got, want) {
		t.Fatalf("the page appended %q to step %s, want %q, one element each", got, step, want)
	}
	if got := texts(byStep[after]); !slices.Equal(got, []string{"counted"}) {
		t.Errorf("the page appended %q to step %s, want its one line", got, after)
	}
	if facts := eval[string](t, ctx, `document.querySelector("dl.facts").innerText`); !strings.Contains(facts, "Pod shape\nchained (") {
		t.Errorf("the run's facts do not say its Pod is chained:\n%s", facts)
	}
	// What the page showed is what the container wrote.
	run := waitFinished(t, c, time.Minute, "lines-1")["lines-1"]
	wantOutcome(t, run, "True/Succeeded")
	wantPodShape(t, c, run, runstate.PodShapeChained, "")
	if got := stepLog(t, c, run, step); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("the Pod logs API gives step %s's log as %q, want the six lines", step, got)
	}
	// The lines came one by one, as written: a second apart, so the first
	// was shown seconds before the last was written.
	var gaps []string
	for i := 1; i < len(counted); i++ {
		gaps = append(gaps, fmt.Sprintf("%dms", counted[i].At-counted[i-1].At))
	}
	first, last := time.UnixMilli(counted[0].At), time.UnixMilli(counted[len(counted)-1].At)
	t.Logf("the first line was on the page %dms after it was opened; the lines came over %dms, %s apart",
		first.Sub(opened).Milliseconds(), last.Sub(first).Milliseconds(), strings.Join(gaps, ", "))
	if spread := last.Sub(first); spread < 3*time.Second {
		t.Errorf("the six lines appeared within %s of each other (%s apart), want them spread over at least 3s, as written", spread, strings.Join(gaps, ", "))
	}
	if s, err := stepStatus(runPod(t, c, run), step); err != nil || s.State.Terminated == nil {
		t.Errorf("step %s's container did not end: %v %+v", step, err, s.State)
	} else if end := s.State.Terminated.FinishedAt.Time; !first.Before(end.Add(-2 * time.Second)) {
		t.Errorf("the first line appeared at %s, not well before the step ended (%s)", first.Format(time.StampMilli), end.Format(time.Stamp))
	}
	screenshot(t, ctx, artifactsDir(t), "run-real-node")
}
