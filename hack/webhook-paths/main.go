// Command webhook-paths prints the paths this tree's manager serves
// (webhooks.ServedPaths) in the format of a frozen release's served-paths
// file, which make verify-api holds the next release's webhook
// configuration to. At a release's freeze:
//
//	go run ./hack/webhook-paths -release "release 6 (v0.6.0)" -commit "$(git rev-parse --short HEAD)" \
//		> test/e2e/testdata/release-6-webhook-paths.txt
//
// See docs/api-compatibility.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/minitask-dev/minitask/internal/apicompat"
	"github.com/minitask-dev/minitask/webhooks"
)

func main() {
	release := flag.String("release", "", `the release frozen, as the docs name it: "release 6 (v0.6.0)"`)
	commit := flag.String("commit", "", "the commit the release was cut from")
	flag.Parse()
	if err := write(os.Stdout, *release, *commit); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-paths:", err)
		os.Exit(1)
	}
}

// write prints webhooks.ServedPaths under a header that names the release
// and its commit.
func write(w io.Writer, release, commit string) error {
	if release == "" || commit == "" {
		return fmt.Errorf("-release and -commit are required: the file names what it froze")
	}
	header := []string{
		"The webhook paths the manager of " + release + " serves (webhooks.ServedPaths at " + commit + "),",
		"written by hack/webhook-paths at its freeze and never regenerated. make verify-api",
		"(FROZEN_WEBHOOK_PATHS) refuses a path the next release's configuration names that is",
		"not here: docs/api-compatibility.md.",
	}
	return apicompat.WriteServedPaths(w, header, webhooks.ServedPaths())
}
