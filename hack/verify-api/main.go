// Command verify-api is the API compatibility gate that `make verify-api`
// runs: it compares the CRDs in config/crd/bases with every frozen release
// and fails, naming each path, on a change that would break a stored object
// or a client of a released version. See docs/api-compatibility.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/minitask-dev/minitask/internal/apicompat"
)

func main() {
	current := flag.String("crds", "config/crd/bases", "the CRDs being built: a directory of YAML files or one file")
	releases := flag.String("releases", "", "the frozen releases' CRD files, comma-separated, oldest first")
	exceptionsFile := flag.String("exceptions", "hack/api-compat-exceptions.yaml", "reviewed breaking changes to accept")
	flag.Parse()
	if err := run(os.Stdout, os.Stderr, *current, strings.Split(*releases, ","), *exceptionsFile); err != nil {
		fmt.Fprintln(os.Stderr, "verify-api:", err)
		os.Exit(1)
	}
}

// run checks the CRDs at currentPath against the releases, oldest first,
// printing each breaking change and stale exception to stderr.
func run(stdout, stderr io.Writer, currentPath string, releasePaths []string, exceptionsFile string) error {
	current, err := apicompat.LoadCRDs(currentPath)
	if err != nil {
		return err
	}
	var releases []apicompat.Release
	for _, path := range releasePaths {
		if path == "" {
			continue
		}
		release, err := apicompat.LoadRelease(path)
		if err != nil {
			return err
		}
		releases = append(releases, release)
	}
	if len(releases) == 0 {
		return fmt.Errorf("no frozen release given (-releases)")
	}
	exceptions, err := apicompat.LoadExceptions(exceptionsFile)
	if err != nil {
		return err
	}
	problems, err := apicompat.Check(releases, current)
	if err != nil {
		return err
	}
	problems, unused := apicompat.Apply(problems, exceptions)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	for _, e := range unused {
		fmt.Fprintf(stderr, "%s: stale exception (matches no change): release %s %s %s %s %s\n",
			exceptionsFile, e.Release, e.CRD, e.Version, e.Path, e.Kind)
	}
	if len(problems) > 0 || len(unused) > 0 {
		return fmt.Errorf("%d breaking API changes, %d stale exceptions", len(problems), len(unused))
	}
	names := make([]string, len(releases))
	for i, r := range releases {
		names[i] = r.Name
	}
	fmt.Fprintf(stdout, "verify-api: %s compatible with %s\n", currentPath, strings.Join(names, ", "))
	return nil
}
