package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minitask-dev/minitask/internal/apicompat"
	"github.com/minitask-dev/minitask/webhooks"
)

// TestWriteReadsBack: what a freeze writes, the gate reads as the paths
// the release serves, under the release's name.
func TestWriteReadsBack(t *testing.T) {
	var out bytes.Buffer
	if err := write(&out, "release 6 (v0.6.0)", "abc1234"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# The webhook paths the manager of release 6 (v0.6.0) serves (webhooks.ServedPaths at abc1234),\n") {
		t.Errorf("the header does not name the release and the commit:\n%s", out.String())
	}
	file := filepath.Join(t.TempDir(), "release-6"+apicompat.ServedPathsSuffix)
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	served, err := apicompat.LoadServedPaths(file)
	if err != nil {
		t.Fatal(err)
	}
	want := apicompat.ServedPaths{Release: "release-6", File: "release-6" + apicompat.ServedPathsSuffix, Paths: webhooks.ServedPaths()}
	if diff := cmp.Diff(want, served); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestWriteNeedsReleaseAndCommit(t *testing.T) {
	if err := write(&bytes.Buffer{}, "release 6 (v0.6.0)", ""); err == nil {
		t.Error("no error without a commit")
	}
}
