package apicompat

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Check compares current with every frozen release, oldest first, and returns
// every breaking change, sorted. It refuses releases out of that order, since
// which one is the newest decides what the lifecycle is checked against.
//
// Schemas are compared with every release that served the same version, since
// a client of any released version may still write. The version lifecycle is
// checked against the newest release only, because upgrades go release by
// release: a served version must be deprecated in a release before it is
// unserved, and unserved in a release before it is removed; the storage
// version may change only while the old one stays in the CRD, so that objects
// stored in it still decode until the storage migration has rewritten them.
func Check(releases []Release, current CRDSet) ([]Problem, error) {
	if err := checkOrder(releases); err != nil {
		return nil, err
	}
	var problems []Problem
	for i, release := range releases {
		newest := i == len(releases)-1
		for _, name := range sortedKeys(release.CRDs) {
			ps, err := checkCRD(release.CRDs[name], current[name], newest)
			if err != nil {
				return nil, err
			}
			for j := range ps {
				ps[j].Release, ps[j].CRD = release.Name, name
			}
			problems = append(problems, ps...)
		}
	}
	sortProblems(problems)
	return problems, nil
}

func checkCRD(old, cur *apiextensionsv1.CustomResourceDefinition, newest bool) ([]Problem, error) {
	if cur == nil {
		return []Problem{{Kind: VersionRemoved, Detail: "the CRD was removed"}}, nil
	}
	problems := checkNames(old, cur)
	if newest {
		problems = append(problems, checkLifecycle(old, cur)...)
	}
	for i := range old.Spec.Versions {
		ov := &old.Spec.Versions[i]
		cv := version(cur, ov.Name)
		if !ov.Served || cv == nil || !cv.Served {
			continue
		}
		oldSchema, err := structural(old, ov)
		if err != nil {
			return nil, err
		}
		curSchema, err := structural(cur, cv)
		if err != nil {
			return nil, err
		}
		for _, p := range compareSchemas(oldSchema, curSchema) {
			p.Version = ov.Name
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// checkNames refuses changes that make clients' names for the kind stop working.
func checkNames(old, cur *apiextensionsv1.CustomResourceDefinition) []Problem {
	var problems []Problem
	if old.Spec.Scope != cur.Spec.Scope {
		problems = append(problems, Problem{Kind: ScopeChanged, Detail: "scope " + string(old.Spec.Scope) + " became " + string(cur.Spec.Scope)})
	}
	on, cn := old.Spec.Names, cur.Spec.Names
	if on.Kind != cn.Kind || on.ListKind != cn.ListKind || on.Plural != cn.Plural || on.Singular != cn.Singular {
		problems = append(problems, Problem{Kind: NamesChanged, Detail: "kind, listKind, plural or singular changed"})
	}
	for _, short := range on.ShortNames {
		if !slices.Contains(cn.ShortNames, short) {
			problems = append(problems, Problem{Kind: NamesChanged, Detail: "short name " + short + " removed"})
		}
	}
	for _, category := range on.Categories {
		if !slices.Contains(cn.Categories, category) {
			problems = append(problems, Problem{Kind: NamesChanged, Detail: "category " + category + " removed"})
		}
	}
	return problems
}

// checkLifecycle enforces the stages a version goes through: served, served
// and deprecated, unserved, removed, one release each at least.
func checkLifecycle(old, cur *apiextensionsv1.CustomResourceDefinition) []Problem {
	var problems []Problem
	for i := range old.Spec.Versions {
		ov := &old.Spec.Versions[i]
		cv := version(cur, ov.Name)
		switch {
		case cv == nil && ov.Served:
			problems = append(problems, Problem{Version: ov.Name, Kind: VersionRemoved,
				Detail: "removed while the release served it: unserve it (served: false) for a release first"})
		case cv != nil && ov.Served && !cv.Served && !ov.Deprecated:
			problems = append(problems, Problem{Version: ov.Name, Kind: VersionUnserved,
				Detail: "unserved without being deprecated in the release (deprecated: true, with a warning) first"})
		}
	}
	if was, is := storageVersion(old), storageVersion(cur); was != is && version(cur, was) == nil {
		problems = append(problems, Problem{Version: was, Kind: StorageChanged,
			Detail: "storage version changed to " + is + " while " + was + " was removed: objects stored as " + was +
				" could no longer be read or migrated; keep it in the CRD for a release"})
	}
	return problems
}
