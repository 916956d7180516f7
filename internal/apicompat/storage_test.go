package apicompat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestStorageTrain moves the TaskRun's storage version the ways a release
// could, against release-4 (its frozen CRDs, which serve v1alpha1 and
// v1beta1 and store v1beta1, as the release before and the release after):
// a version must be served for a release before it is stored, and stay
// served for a release after storage has moved off it. The cases start from
// release 4 rather than today's CRDs, which have served v1 since release 5
// and store it since release 6: each case says itself what v1 is.
func TestStorageTrain(t *testing.T) {
	cases := map[string]struct {
		editRelease func(CRDSet)
		editCurrent func(CRDSet)
		want        []Problem
	}{
		// Release 5: v1 served, storage stays v1beta1.
		"new version served, storage kept": {
			editCurrent: func(s CRDSet) { addV1(s[taskRuns], false) },
		},
		// Release 6 after release 5.
		"storage moves to a version the release before served": {
			editRelease: func(s CRDSet) { addV1(s[taskRuns], false) },
			editCurrent: func(s CRDSet) { addV1(s[taskRuns], true) },
		},
		// Crossplane #6148: v1 added and stored at once.
		"storage moves to a version new in this release": {
			editCurrent: func(s CRDSet) { addV1(s[taskRuns], true) },
			want: []Problem{{CRD: taskRuns, Version: "v1", Kind: StorageNotServedBefore,
				Detail: "TaskRun: storage version v1 was not served by release-4-crds.yaml (the release before); " +
					"a version must be served for one release before it is stored, or a rollback by one release " +
					"cannot read what this release writes"}},
		},
		"storage moves to a version the release before had, unserved": {
			editRelease: func(s CRDSet) { addV1(s[taskRuns], false).Served = false },
			editCurrent: func(s CRDSet) { addV1(s[taskRuns], true) },
			want:        []Problem{{CRD: taskRuns, Version: "v1", Kind: StorageNotServedBefore}},
		},
		"storage moves back to a version the release before served": {
			editRelease: func(s CRDSet) {
				version(s[taskRuns], "v1alpha1").Storage = true
				version(s[taskRuns], "v1beta1").Storage = false
			},
		},
		"the release before's storage version unserved as storage moves off it": {
			editRelease: func(s CRDSet) {
				addV1(s[taskRuns], false)
				version(s[taskRuns], "v1beta1").Deprecated = true
			},
			editCurrent: func(s CRDSet) {
				addV1(s[taskRuns], true)
				version(s[taskRuns], "v1beta1").Served = false
			},
			want: []Problem{{CRD: taskRuns, Version: "v1beta1", Kind: StoredVersionUnserved,
				Detail: "TaskRun: version v1beta1 is no longer served, but release-4-crds.yaml (the release before) stored it; " +
					"a version must stay served for one release after storage moves off it: that release's manager " +
					"reads and writes it until the upgrade has replaced it, and objects stay stored as v1beta1 " +
					"until the storage migration has rewritten them"}},
		},
		"the storage version unserved": {
			editRelease: func(s CRDSet) { version(s[taskRuns], "v1beta1").Deprecated = true },
			editCurrent: func(s CRDSet) { version(s[taskRuns], "v1beta1").Served = false },
			want:        []Problem{{CRD: taskRuns, Version: "v1beta1", Kind: StoredVersionUnserved}},
		},
		// Release 7: release 6 stored v1, so v1beta1 may go.
		"a version unserved a release after storage moved off it": {
			editRelease: func(s CRDSet) {
				addV1(s[taskRuns], true)
				version(s[taskRuns], "v1beta1").Deprecated = true
			},
			editCurrent: func(s CRDSet) {
				addV1(s[taskRuns], true)
				version(s[taskRuns], "v1beta1").Served = false
			},
		},
		"storage moves off a version that is removed": {
			editRelease: func(s CRDSet) { addV1(s[taskRuns], false) },
			editCurrent: func(s CRDSet) {
				addV1(s[taskRuns], true)
				removeVersion(s[taskRuns], "v1beta1")
			},
			want: []Problem{
				{CRD: taskRuns, Version: "v1beta1", Kind: StorageChanged},
				{CRD: taskRuns, Version: "v1beta1", Kind: VersionRemoved},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			release, current := release4CRDs(t), release4CRDs(t)
			if tc.editRelease != nil {
				tc.editRelease(release)
			}
			if tc.editCurrent != nil {
				tc.editCurrent(current)
			}
			got, err := Check([]Release{{Name: "release-4", File: "release-4-crds.yaml", Version: "v0.4.0", CRDs: release}}, current)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].Release = "release-4"
			}
			// A case that gives its problem's Detail holds the message to it.
			opts := []cmp.Option{cmpopts.EquateEmpty()}
			if len(tc.want) == 0 || tc.want[0].Detail == "" {
				opts = append(opts, cmpopts.IgnoreFields(Problem{}, "Detail"))
			}
			if diff := cmp.Diff(tc.want, got, opts...); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStorageTrainUsesTheNewestRelease holds the storage version to the last
// release given (the newest: FROZEN_RELEASES is oldest first), whatever an
// older one served.
func TestStorageTrainUsesTheNewestRelease(t *testing.T) {
	withV1 := func(t *testing.T) CRDSet {
		s := release4CRDs(t)
		addV1(s[taskRuns], false)
		return s
	}
	cases := map[string]struct {
		older, newest func(*testing.T) CRDSet
		want          []Problem
	}{
		"served by the newest only": {older: release4CRDs, newest: withV1},
		"served by an older release only": {older: withV1, newest: release4CRDs,
			want: []Problem{{Release: "release-4", CRD: taskRuns, Version: "v1", Kind: StorageNotServedBefore}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			current := release4CRDs(t)
			addV1(current[taskRuns], true)
			releases := []Release{
				{Name: "release-2", Version: "v0.2.0", CRDs: tc.older(t)},
				{Name: "release-4", Version: "v0.4.0", CRDs: tc.newest(t)},
			}
			got, err := Check(releases, current)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Problem{}, "Detail"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// release4CRDs are release 4's frozen CRDs, a fresh copy each call.
func release4CRDs(t *testing.T) CRDSet {
	t.Helper()
	r, err := LoadRelease("../../test/e2e/testdata/release-4-crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return r.CRDs
}

// addV1 adds v1 to crd, a copy of v1beta1, served and stored if storage
// (v1beta1 no longer), and returns it.
func addV1(crd *apiextensionsv1.CustomResourceDefinition, storage bool) *apiextensionsv1.CustomResourceDefinitionVersion {
	v1 := version(crd, "v1beta1").DeepCopy()
	v1.Name, v1.Served, v1.Storage, v1.Deprecated, v1.DeprecationWarning = "v1", true, storage, false, nil
	if storage {
		version(crd, "v1beta1").Storage = false
	}
	crd.Spec.Versions = append(crd.Spec.Versions, *v1)
	return version(crd, "v1")
}
