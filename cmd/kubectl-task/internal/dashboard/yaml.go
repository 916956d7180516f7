package dashboard

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/dashboard/pages"
)

// servedVersions are the API versions a run's YAML is shown in, with what
// a reader should know of each.
var servedVersions = []struct{ version, note string }{
	{"v1alpha1", "The first release's API, deprecated: what a v1alpha1 client reads. What it cannot express rides in the minitask.dev/conversion-data annotation."},
	{"v1beta1", "Deprecated: what a v1beta1 client reads. An array or object param value appears as its JSON text; " +
		"what it cannot express (a value's type, timeouts.pending) rides in the minitask.dev/conversion-data annotation."},
	{"v1", "The stable API (stored from release 6), which kubectl task and the dashboard read and write."},
}

// runYAML is the run as each API version serves it, side by side: each
// read from the API server in that version, converted by the conversion
// webhook, as a client of that version sees it.
func (s *Server) runYAML(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.inScope(ns) {
		s.outOfScope(w, r, ns)
		return
	}
	var versions []pages.VersionYAML
	found := false
	for _, v := range servedVersions {
		gv := v1.GroupVersion.Group + "/" + v.version
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(gv)
		u.SetKind("TaskRun")
		view := pages.VersionYAML{APIVersion: gv, Note: v.note}
		err := s.cfg.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
		switch {
		case apierrors.IsForbidden(err):
			s.fail(w, r, fmt.Sprintf("reading TaskRun %q in namespace %q as %s", name, ns, gv), err)
			return
		case apierrors.IsNotFound(err):
			view.Error = fmt.Sprintf("Not found in %s: %s", gv, apiMessage(err))
		case err != nil:
			view.Error = fmt.Sprintf("Cannot be read as %s: %s", gv, apiMessage(err))
		default:
			found = true
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
			b, err := yaml.Marshal(u.Object)
			if err != nil {
				view.Error = err.Error()
			}
			view.YAML = string(b)
		}
		versions = append(versions, view)
	}
	if !found {
		s.refuse(w, r, http.StatusNotFound, "No such run",
			fmt.Sprintf("TaskRun %q is not in namespace %q: it may have been deleted.", name, ns), "/runs", "Back to the runs")
		return
	}
	s.pageOrFail(w, http.StatusOK, pages.PageYAML, pages.NewYAMLPage(s.layout(r), ns, name, versions))
}
