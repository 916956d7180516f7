package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
)

// fail shows err, met while doing what (e.g. "reading TaskRun x"), as a
// page: a Forbidden from the API server as such, with the API server's own
// words, not as a crash or an empty page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	page := pages.ErrorPage{Layout: s.layout(r).For("Error", ""), Back: "/runs", BackText: "Back to the runs"}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err):
		page.Code, page.Heading = http.StatusForbidden, "Forbidden"
		page.Message = fmt.Sprintf("The API server refused %s: %s", what, apiMessage(err))
		page.Hint = "The dashboard acts with your kubeconfig's credentials, so it can show and do only what you may. " +
			"Ask for the permission, or choose another context or namespace."
	case apierrors.IsNotFound(err):
		page.Code, page.Heading = http.StatusNotFound, "Not found"
		page.Message = fmt.Sprintf("Not found while %s: %s", what, apiMessage(err))
	case apierrors.IsUnauthorized(err):
		page.Code, page.Heading = http.StatusUnauthorized, "Not logged in"
		page.Message = fmt.Sprintf("The API server refused your credentials while %s: %s", what, apiMessage(err))
		page.Hint = "Log in again (your kubeconfig's credentials may have expired), then reload."
	case meta.IsNoMatchError(err):
		page.Code, page.Heading = http.StatusBadGateway, "minitask is not installed"
		page.Message = fmt.Sprintf("The cluster does not serve minitask.dev/v1, which minitask serves from release 5 on (%s).", what)
	case errors.As(err, &status):
		code := int(status.Status().Code)
		if code < 400 || code > 599 {
			code = http.StatusBadGateway
		}
		page.Code, page.Heading = code, "The API server refused"
		page.Message = fmt.Sprintf("While %s: %s", what, apiMessage(err))
	default:
		page.Code, page.Heading = http.StatusBadGateway, "Cannot reach the cluster"
		page.Message = fmt.Sprintf("While %s: %s", what, oneLine(err.Error()))
	}
	s.pageOrFail(w, page.Code, pages.PageError, page)
}

// refuse shows a request the dashboard will not do, with code.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, heading, message, back, backText string) {
	page := pages.ErrorPage{Layout: s.layout(r).For(heading, ""), Code: code, Heading: heading, Message: message, Back: back, BackText: backText}
	if page.Back == "" {
		page.Back, page.BackText = "/runs", "Back to the runs"
	}
	s.pageOrFail(w, code, pages.PageError, page)
}

// outOfScope refuses a namespace the dashboard does not show.
func (s *Server) outOfScope(w http.ResponseWriter, r *http.Request, ns string) {
	s.refuse(w, r, http.StatusNotFound, "Not shown here",
		fmt.Sprintf("This dashboard shows namespace %q only, not %q. Start one with -n %s, or -A for every namespace.", s.cfg.Namespace, ns, ns), "", "")
}

// apiMessage is the API server's own message for err.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return oneLine(status.Status().Message)
	}
	return oneLine(err.Error())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// flash is the line saying what the last action did, from the query the
// action redirected with: fixed words, with only the names a query holds.
func flash(r *http.Request) string {
	q := r.URL.Query()
	switch q.Get("done") {
	case "started":
		return "TaskRun started."
	case "rerun":
		return fmt.Sprintf("Started again, with the settings of TaskRun %s.", q.Get("from"))
	case "cancelled":
		return "Cancel requested: the controller stops the run's Pod, and its logs stay readable."
	case "already-cancelling":
		return "This run was already being cancelled."
	case "deleted":
		return fmt.Sprintf("TaskRun %s deleted, with its Pods.", q.Get("run"))
	}
	return ""
}

// redirectDone sends the browser, after an action, to path, saying done.
func redirectDone(w http.ResponseWriter, r *http.Request, path, done string, extra url.Values) {
	q := url.Values{"done": {done}}
	for k, v := range extra {
		q[k] = v
	}
	http.Redirect(w, r, path+"?"+q.Encode(), http.StatusSeeOther)
}
