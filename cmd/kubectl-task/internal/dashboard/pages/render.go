// Package pages turns what the API server returned into the dashboard's
// HTML: one html/template per page, which escapes every value from the
// cluster for where it lands (text, attribute, URL), and the view of each
// page as a plain struct built from API objects by a function tested on
// its own. It also holds the pages' static files: their stylesheet and the
// small script that makes the live parts live.
package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
)

//go:embed templates
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Static are the pages' stylesheet and script, served under /static/.
func Static() fs.FS {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// The pages, by the name of their template file.
const (
	PageRuns  = "runs"
	PageRun   = "run"
	PageYAML  = "yaml"
	PageTasks = "tasks"
	PageTask  = "task"
	PageError = "error"
)

// The fragments a live page swaps in, from fragments.html.
const (
	FragmentRunRow     = "run-row"
	FragmentRunLive    = "run-live"
	FragmentRunOutcome = "run-outcome"
	FragmentRunEvents  = "run-events"
)

// Renderer executes the pages' templates.
type Renderer struct {
	pages     map[string]*template.Template
	fragments *template.Template
}

// NewRenderer parses every page's template, each with the layout and the
// fragments.
func NewRenderer() (*Renderer, error) {
	r := &Renderer{pages: map[string]*template.Template{}}
	var err error
	r.fragments, err = template.ParseFS(templateFiles, "templates/fragments.html")
	if err != nil {
		return nil, err
	}
	for _, page := range []string{PageRuns, PageRun, PageYAML, PageTasks, PageTask, PageError} {
		t, err := template.ParseFS(templateFiles, "templates/layout.html", "templates/fragments.html", "templates/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("parsing page %s: %w", page, err)
		}
		r.pages[page] = t
	}
	return r, nil
}

// Page writes page with data to w, whole, or nothing if it fails: a
// template that fails half way must not leave half a page.
func (r *Renderer) Page(w io.Writer, page string, data any) error {
	t, ok := r.pages[page]
	if !ok {
		return fmt.Errorf("no page %q", page)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		return fmt.Errorf("rendering page %s: %w", page, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Fragment returns the fragment named name with data, as HTML.
func (r *Renderer) Fragment(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := r.fragments.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("rendering %s: %w", name, err)
	}
	return b.String(), nil
}
