package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/testing/fixtures"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestTypedParamsAndTimeouts shows a run's array and object values as JSON
// with their types, and both its timeouts; the Task's page shows its
// params' types and takes a value of each in its start form, as start's -p
// does.
func TestTypedParamsAndTimeouts(t *testing.T) {
	s := serve(t, "")
	run := wrappers.TaskRun("", "lint-1", "lint").Params(v1.Param{Name: "files", Value: *v1.NewArrayValue("a.go", "b c.go")}).
		Timeout(10 * time.Minute).Obj()
	run.Spec.Timeouts.Pending = v1.NewDuration(5 * time.Minute)
	s.Create(t, fixtures.LintTask(""), run)

	contains := func(t *testing.T, page string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(page, want) {
				t.Errorf("no %q in:\n%s", want, page)
			}
		}
	}
	t.Run("the run's page", func(t *testing.T) {
		code, page := s.get(t, "/runs/"+s.NS+"/lint-1")
		if code != http.StatusOK {
			t.Fatalf("%d\n%s", code, page)
		}
		contains(t, html.UnescapeString(page),
			`<td>files</td><td>array</td><td><code class="value">["a.go","b c.go"]</code></td><td>run</td>`,
			`<td>image</td><td>object</td><td><code class="value">{"repo":"example.org/app","tag":"latest"}</code></td><td>default</td>`,
			`<td>mode</td><td>string</td><td><code class="value">strict</code></td><td>default</td>`,
			"<dt>Timeout</dt><dd>10m0s</dd>", "<dt>Pending timeout</dt><dd>5m0s</dd>")
	})
	t.Run("the Task's page", func(t *testing.T) {
		code, page := s.get(t, "/tasks/"+s.NS+"/lint")
		if code != http.StatusOK {
			t.Fatalf("%d\n%s", code, page)
		}
		contains(t, html.UnescapeString(page),
			`<td>files</td><td>array</td><td>required</td>`,
			`<td>image</td><td>object</td><td><code class="value">{"repo":"example.org/app","tag":"latest"}</code></td>`,
			`value="{"repo":"example.org/app","tag":"latest"}"`,
			`<p class="hint">Give a JSON array of strings, ["a","b"], or items between commas, a,b.</p>`,
			`<p class="hint">Give a JSON object of strings, {"KEY":"VALUE"}, or KEY=VALUE pairs between commas, repo=VALUE,tag=VALUE.</p>`,
			`<label for="param.files">files (array, required)</label>`, `<label for="param.image">image (object)</label>`,
			`<label for="param.mode">mode</label>`)
	})

	image := func(repo, tag string) v1.ParamValue {
		return *v1.NewObjectValue(map[string]string{"repo": repo, "tag": tag})
	}
	starts := map[string]struct {
		form     url.Values
		wantCode int
		want     []v1.Param
		wantBody string
	}{
		"items between commas, the default object left out": {
			form:     url.Values{"param.files": {"a.go,b.go"}, "param.image": {`{"repo":"example.org/app","tag":"latest"}`}, "param.mode": {"strict"}},
			wantCode: http.StatusSeeOther,
			want:     []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a.go", "b.go")}},
		},
		"JSON and KEY=VALUE pairs": {
			form:     url.Values{"param.files": {`["a,b.go"]`}, "param.image": {"repo=r,tag=t"}, "param.mode": {"[x]"}},
			wantCode: http.StatusSeeOther,
			want: []v1.Param{{Name: "files", Value: *v1.NewArrayValue("a,b.go")}, {Name: "image", Value: image("r", "t")},
				{Name: "mode", Value: *v1.NewStringValue("[x]")}},
		},
		"an object lacking a key": {
			form:     url.Values{"param.files": {"a.go"}, "param.image": {"repo=r"}},
			wantCode: http.StatusBadRequest,
			wantBody: "Param image is an object: it lacks the keys the param declares: tag.",
		},
		"an array of numbers": {
			form:     url.Values{"param.files": {"[1]"}},
			wantCode: http.StatusBadRequest,
			wantBody: `Param files is an array: "[1]" is not a JSON array of strings: a JSON number where a string goes.`,
		},
	}
	for name, tc := range starts {
		t.Run("start: "+name, func(t *testing.T) {
			code, to, body := s.post(t, "/tasks/"+s.NS+"/lint/start", tc.form)
			if code != tc.wantCode {
				t.Fatalf("start: %d to %q, want %d\n%s", code, to, tc.wantCode, body)
			}
			if tc.wantBody != "" {
				contains(t, html.UnescapeString(body), tc.wantBody)
				return
			}
			started := strings.TrimSuffix(strings.TrimPrefix(to, "/runs/"+s.NS+"/"), "?done=started")
			if diff := cmp.Diff(tc.want, s.TaskRun(t, started).Spec.Params); diff != "" {
				t.Errorf("the started run's params (-want +got):\n%s", diff)
			}
		})
	}
}
