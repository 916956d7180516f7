// Command verify-api is the API compatibility gate that `make verify-api`
// runs: it compares the CRDs in config/crd/bases with every frozen release
// and fails, naming each path, on a change that would break a stored object
// or a client of a released version; given the newest frozen release's
// served webhook paths, on a webhook path its manager does not serve; and,
// with -require-kept, on a field the newest frozen release's schema lacks.
// See docs/api-compatibility.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/minitask-dev/minitask/internal/apicompat"
)

// gate is what one run checks, as the flags give it.
type gate struct {
	// crds are the CRDs being built: a directory of YAML files or one file.
	crds string
	// releases are the frozen releases' CRD files, oldest first.
	releases []string
	// exceptions is the reviewed exceptions file.
	exceptions string
	// webhooks are the files (or directories) whose webhook configurations
	// and CRD conversion webhooks name the paths the manager must serve.
	webhooks []string
	// servedPaths is the newest frozen release's served-paths file; empty,
	// the webhook paths are not checked.
	servedPaths string
	// requireKept checks that the newest frozen release's schemas have
	// every field the CRDs being built have.
	requireKept bool
}

func main() {
	var g gate
	var releases, webhooks string
	flag.StringVar(&g.crds, "crds", "config/crd/bases", "the CRDs being built: a directory of YAML files or one file")
	flag.StringVar(&releases, "releases", "", "the frozen releases' CRD files, comma-separated, oldest first")
	flag.StringVar(&g.exceptions, "exceptions", "hack/api-compat-exceptions.yaml", "reviewed breaking changes to accept")
	flag.StringVar(&webhooks, "webhooks", "config/webhook/manifests.yaml,config/crd/patches",
		"the webhook configurations and CRD conversion patches whose paths -served-paths must list, comma-separated files or directories")
	flag.StringVar(&g.servedPaths, "served-paths", "",
		"the newest frozen release's served webhook paths (test/e2e/testdata/release-N-webhook-paths.txt); empty: not checked")
	flag.BoolVar(&g.requireKept, "require-kept", false, "refuse a field that the newest frozen release's schema lacks")
	flag.Parse()
	g.releases, g.webhooks = splitList(releases), splitList(webhooks)
	if err := g.run(os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "verify-api:", err)
		os.Exit(1)
	}
}

func splitList(s string) []string {
	return slices.DeleteFunc(strings.Split(s, ","), func(e string) bool { return e == "" })
}

// run checks the CRDs against the releases, oldest first, and the webhook
// paths against the newest release's served paths, printing each breaking
// change and stale exception to stderr.
func (g gate) run(stdout, stderr io.Writer) error {
	current, err := apicompat.LoadCRDs(g.crds)
	if err != nil {
		return err
	}
	var releases []apicompat.Release
	for _, path := range g.releases {
		release, err := apicompat.LoadRelease(path)
		if err != nil {
			return err
		}
		releases = append(releases, release)
	}
	if len(releases) == 0 {
		return fmt.Errorf("no frozen release given (-releases)")
	}
	exceptions, err := apicompat.LoadExceptions(g.exceptions)
	if err != nil {
		return err
	}
	problems, err := apicompat.Check(releases, current)
	if err != nil {
		return err
	}
	newest := releases[len(releases)-1]
	if g.requireKept {
		kept, err := apicompat.CheckKept(newest, current)
		if err != nil {
			return err
		}
		problems = append(problems, kept...)
	} else {
		// Not checked, so none of its exceptions can match: they are not stale.
		exceptions = slices.DeleteFunc(exceptions, func(e apicompat.Exception) bool { return e.Kind == apicompat.FieldNotKept })
		fmt.Fprintf(stdout, "verify-api: fields %s lacks are not checked (-require-kept is off until the newest frozen release keeps every field)\n", newest.Name)
	}
	if g.servedPaths != "" {
		paths, err := g.checkWebhookPaths(newest)
		if err != nil {
			return err
		}
		problems = append(problems, paths...)
	} else {
		fmt.Fprintln(stdout, "verify-api: webhook paths are not checked: no frozen release lists its served paths yet (-served-paths)")
	}
	problems, unused := apicompat.Apply(problems, exceptions)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	for _, e := range unused {
		fmt.Fprintf(stderr, "%s: stale exception (matches no change): release %s %s %s %s %s\n",
			g.exceptions, e.Release, e.CRD, e.Version, e.Path, e.Kind)
	}
	if len(problems) > 0 || len(unused) > 0 {
		return fmt.Errorf("%d breaking API changes, %d stale exceptions", len(problems), len(unused))
	}
	names := make([]string, len(releases))
	for i, r := range releases {
		names[i] = r.Name
	}
	fmt.Fprintf(stdout, "verify-api: %s compatible with %s\n", g.crds, strings.Join(names, ", "))
	return nil
}

// checkWebhookPaths holds the paths that g.webhooks name to the served
// paths of newest, the newest frozen release.
func (g gate) checkWebhookPaths(newest apicompat.Release) ([]apicompat.Problem, error) {
	served, err := apicompat.LoadServedPaths(g.servedPaths)
	if err != nil {
		return nil, err
	}
	if served.Release != newest.Name {
		return nil, fmt.Errorf("-served-paths %s is %s's, not the newest frozen release's (%s): a rolling update starts from the newest",
			g.servedPaths, served.Release, newest.Name)
	}
	if len(g.webhooks) == 0 {
		return nil, fmt.Errorf("-served-paths needs -webhooks, the files that name the paths to check")
	}
	configured, err := apicompat.LoadWebhookPaths(g.webhooks...)
	if err != nil {
		return nil, err
	}
	if len(configured) == 0 {
		return nil, fmt.Errorf("%s name no webhook path", strings.Join(g.webhooks, ", "))
	}
	return apicompat.CheckWebhookPaths(served, configured), nil
}
