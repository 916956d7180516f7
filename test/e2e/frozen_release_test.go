//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/minitask-dev/minitask/internal/apicompat"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// frozenRelease is a release that shipped, as the rehearsals run it: its
// source tree from git history, its real manager built from that tree, and
// its CRDs frozen in testdata/NAME-crds.yaml, which make verify-api holds
// the current CRDs compatible with.
type frozenRelease struct {
	// name is the release's name in testdata and bin/: release-2.
	name string
	// commit is main when the release shipped.
	commit string

	// once makes the tree and the manager once per test binary, for every
	// rehearsal that needs them (they may run in parallel).
	once sync.Once
	// dir is the release's tree (git archive), removed when the tests end.
	dir string
	// manager is its manager, cached in bin/NAME/COMMIT/manager, so that
	// only the first run on a machine builds it.
	manager string
	err     error
}

// The releases the rehearsals can run. A release is added here when its
// CRDs are frozen (docs/api-compatibility.md), so that rehearsals of the
// upgrade from it, and of the rollback to it, can run its real manager.
var (
	// release2 is release 2 (v0.2.0): main before issue 13.
	release2 = &frozenRelease{name: "release-2", commit: "1ba01c5"}
	// release4 is release 4 (v0.4.0): main before issue 33, the release a
	// rollback from release 5 goes back to.
	release4 = &frozenRelease{name: "release-4", commit: "7d052ff"}
	// release5 is release 5 (v0.5.0): main before the storage moved to v1
	// (issue 33, release 6), the release a rollback from release 6 goes
	// back to, and the first to serve v1.
	release5 = &frozenRelease{name: "release-5", commit: "1715775"}
	// release6 is release 6 (v0.6.0): main before release 7 accepted what
	// release 6 keeps, the release a rollback from release 7 goes back to.
	release6 = &frozenRelease{name: "release-6", commit: "c379147"}
)

// frozenReleases are the releases above, oldest first.
var frozenReleases = []*frozenRelease{release2, release4, release5, release6}

// crds is the release's frozen CRD file, relative to this package.
func (r *frozenRelease) crds() string {
	return filepath.Join("testdata", r.name+"-crds.yaml")
}

// prefetch starts making the release's tree and manager in the background,
// so that building it overlaps with creating a cluster.
func (r *frozenRelease) prefetch(repo string) {
	go r.once.Do(func() { r.make(repo) })
}

// build returns the release's tree and manager, building the manager the
// first time: about 12 s with a warm Go build cache, a minute cold.
func (r *frozenRelease) build(t testing.TB) (dir, manager string) {
	t.Helper()
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r.once.Do(func() { r.make(repo) })
	if r.err != nil {
		t.Fatalf("%s: %v", r.name, r.err)
	}
	return r.dir, r.manager
}

func (r *frozenRelease) make(repo string) {
	r.dir, r.err = extractRelease(repo, r.name, r.commit)
	if r.err == nil {
		r.manager, r.err = buildManager(repo, r.dir, filepath.Join(repo, "bin", r.name, r.commit, "manager"))
	}
}

// releaseTrees are the directories extractRelease made, removed by TestMain.
// Releases are extracted in parallel, hence the lock.
var releaseTrees struct {
	sync.Mutex
	dirs []string
}

// removeReleaseTrees removes what extractRelease extracted.
func removeReleaseTrees() {
	releaseTrees.Lock()
	defer releaseTrees.Unlock()
	for _, dir := range releaseTrees.dirs {
		os.RemoveAll(dir)
	}
}

// extractRelease extracts commit's tree into a temporary directory.
func extractRelease(repo, name, commit string) (string, error) {
	if out, err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		return "", fmt.Errorf("commit %s is not in this clone (%w: %s). The rehearsals build "+
			"%s from git history: use a full clone (git fetch --unshallow; in GitHub Actions, "+
			"actions/checkout with fetch-depth: 0)", commit, err, strings.TrimSpace(string(out)), name)
	}
	dir, err := os.MkdirTemp("", "minitask-release-"+commit+"-")
	if err != nil {
		return "", err
	}
	releaseTrees.Lock()
	releaseTrees.dirs = append(releaseTrees.dirs, dir)
	releaseTrees.Unlock()
	archive := exec.Command("git", "-C", repo, "archive", commit)
	untar := exec.Command("tar", "-x", "-C", dir)
	// One buffer each: os/exec copies each command's stderr in a goroutine
	// of its own, and a shared bytes.Buffer would be written by both at once.
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := errors.Join(archive.Run(), untar.Wait()); err != nil {
		return "", fmt.Errorf("extracting commit %s: %w\n%s%s", commit, err, archiveErr.String(), untarErr.String())
	}
	return dir, nil
}

// buildManager builds the manager of the tree in dir into manager unless
// that is there already.
func buildManager(repo, dir, manager string) (string, error) {
	if _, err := os.Stat(manager); err == nil {
		return manager, nil
	}
	if err := os.MkdirAll(filepath.Dir(manager), 0o755); err != nil {
		return "", err
	}
	// Built under a temporary name and renamed, so that a build cut short
	// never leaves a manager that later runs would take as built. The tree
	// is no git checkout: -buildvcs=false says there is nothing to stamp.
	tmp := manager + ".tmp"
	build := exec.Command("go", "build", "-buildvcs=false", "-o", tmp, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		rel, _ := filepath.Rel(repo, manager)
		return "", fmt.Errorf("building %s: %w\n%s", rel, err, out)
	}
	return manager, os.Rename(tmp, manager)
}

// TestFrozenReleaseCRDs holds each release's frozen CRD file to what its
// commit has in config/crd/bases, the minitask.dev/release annotation that
// freezing adds aside: make verify-api and the rehearsals take that file for
// the release, so it must be what the release shipped. It reads git history
// only, and builds nothing.
func TestFrozenReleaseCRDs(t *testing.T) {
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range frozenReleases {
		t.Run(r.name, func(t *testing.T) {
			files, err := exec.Command("git", "-C", repo, "ls-tree", "--name-only", r.commit, "config/crd/bases/").Output()
			if err != nil {
				t.Fatalf("listing config/crd/bases at %s (the rehearsals need a full clone): %v", r.commit, err)
			}
			shipped := map[string]apiextensionsv1.CustomResourceDefinition{}
			for _, file := range strings.Fields(string(files)) {
				if filepath.Ext(file) != ".yaml" {
					continue
				}
				b, err := exec.Command("git", "-C", repo, "show", r.commit+":"+file).Output()
				if err != nil {
					t.Fatalf("reading %s at %s: %v", file, r.commit, err)
				}
				for _, doc := range yamlDocuments(t, b) {
					var crd apiextensionsv1.CustomResourceDefinition
					fromMap(t, doc, &crd)
					shipped[crd.Name] = crd
				}
			}
			b, err := os.ReadFile(r.crds())
			if err != nil {
				t.Fatal(err)
			}
			frozen := map[string]apiextensionsv1.CustomResourceDefinition{}
			for _, doc := range yamlDocuments(t, b) {
				var crd apiextensionsv1.CustomResourceDefinition
				fromMap(t, doc, &crd)
				delete(crd.Annotations, apicompat.ReleaseAnnotation)
				frozen[crd.Name] = crd
			}
			if diff := cmp.Diff(shipped, frozen); diff != "" {
				t.Errorf("%s is not %s's config/crd/bases (-shipped +frozen):\n%s", r.crds(), r.commit, diff)
			}
		})
	}
}
