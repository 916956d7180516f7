package pages

// Layout is what every page shows around its content.
type Layout struct {
	// Title is the page's title, before " · kubectl task dashboard".
	Title string
	// Section is the navigation entry the page belongs to: runs or tasks.
	Section string
	// Scope says which runs the dashboard shows: a namespace, or all.
	Scope string
	// Cluster is the API server the dashboard reads, as the kubeconfig says.
	Cluster string
	// CSRF is the token the page's forms post; ReadOnly hides the actions.
	CSRF     string
	ReadOnly bool
	// Flash is a line saying what the last action did, if any.
	Flash string
}

// Layout returns l with title and section set, for one page.
func (l Layout) For(title, section string) Layout {
	l.Title, l.Section = title, section
	return l
}
