package pages

// YAMLPage is a run as each API version serves it, side by side.
type YAMLPage struct {
	Layout
	Namespace, Name, RunURL string
	Versions                []VersionYAML
}

// VersionYAML is the run in one API version, or why it could not be read
// in it (a cluster that no longer serves v1alpha1, say).
type VersionYAML struct {
	APIVersion, YAML, Error string
	// Note says what a reader should know of the version.
	Note string
}

// NewYAMLPage shows versions of run ns/name.
func NewYAMLPage(l Layout, ns, name string, versions []VersionYAML) YAMLPage {
	return YAMLPage{Layout: l.For("TaskRun "+name+" as YAML", "runs"), Namespace: ns, Name: name, RunURL: RunPath(ns, name), Versions: versions}
}

// ErrorPage says why a page cannot be shown.
type ErrorPage struct {
	Layout
	Code int
	// Heading is the error in a few words; Message the API server's or
	// the dashboard's own words; Hint what to do.
	Heading, Message, Hint string
	// Back is a link to go on from, with its text.
	Back, BackText string
}
