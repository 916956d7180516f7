package apicompat

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// checkStorage enforces how the storage version moves, against the release
// before (the newest frozen one, named before in messages): the rule of
// Kubernetes' own API versions, which Crossplane learned late
// (crossplane/crossplane#6148). Upgrades go one release at a time and may be
// rolled back by one, so each move must be one that the releases on both
// sides can live with:
//
//   - a new storage version was served by the release before, so that a
//     rollback by one release can apply that release's CRDs (the API server
//     refuses CRDs that lack a version storedVersions names) and its
//     conversion, manager and clients know what this release wrote;
//   - the version the release before stored stays served, because that
//     release's manager reads and writes it until the upgrade has replaced
//     it, and objects stay stored in it until the storage migration has
//     rewritten them;
//   - the version the release before stored stays in the CRD, so that the
//     objects stored in it can still be read and migrated.
func checkStorage(old, cur *apiextensionsv1.CustomResourceDefinition, before string) []Problem {
	var problems []Problem
	kind := cur.Spec.Names.Kind
	was, is := storageVersion(old), storageVersion(cur)
	if is != was && is != "" {
		if v := version(old, is); v == nil || !v.Served {
			problems = append(problems, Problem{Version: is, Kind: StorageNotServedBefore,
				Detail: kind + ": storage version " + is + " was not served by " + before + " (the release before); " +
					"a version must be served for one release before it is stored, or a rollback by one release " +
					"cannot read what this release writes"})
		}
	}
	if was == "" {
		return problems
	}
	switch v := version(cur, was); {
	case v == nil:
		problems = append(problems, Problem{Version: was, Kind: StorageChanged,
			Detail: "storage version changed to " + is + " while " + was + " was removed: objects stored as " + was +
				" could no longer be read or migrated; keep it in the CRD for a release"})
	case !v.Served:
		problems = append(problems, Problem{Version: was, Kind: StoredVersionUnserved,
			Detail: kind + ": version " + was + " is no longer served, but " + before + " (the release before) stored it; " +
				"a version must stay served for one release after storage moves off it: that release's manager " +
				"reads and writes it until the upgrade has replaced it, and objects stay stored as " + was +
				" until the storage migration has rewritten them"})
	}
	return problems
}
