package pages

import (
	"net/url"
)

// The dashboard's URLs, built in one place so that links and routes agree.

// RunPath is the page of run ns/name.
func RunPath(ns, name string) string {
	return "/runs/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// TaskPath is the page of Task ns/name.
func TaskPath(ns, name string) string {
	return "/tasks/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// RunsPath is the runs page with query q.
func RunsPath(q url.Values) string { return withQuery("/runs", q) }

// RunsLivePath is the stream of changes of the runs page with query q.
func RunsLivePath(q url.Values) string { return withQuery("/live/runs", q) }

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// RowID is the HTML id of run ns/name's row in a list, which a change to
// it replaces.
func RowID(ns, name string) string { return "run/" + ns + "/" + name }
