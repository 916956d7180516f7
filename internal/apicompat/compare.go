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
// a client of any released version may still write. The version lifecycle and
// the storage version are checked against the newest release only, because
// upgrades (and rollbacks) go release by release: a served version must be
// marked deprecated in a release before it is unserved, and unserved in a
// release before it is removed; the storage version moves as checkStorage says.
func Check(releases []Release, current CRDSet) ([]Problem, error) {
	if err := checkOrder(releases); err != nil {
		return nil, err
	}
	var problems []Problem
	for i, release := range releases {
		newest := i == len(releases)-1
		for _, name := range sortedKeys(release.CRDs) {
			ps, err := checkCRD(release, name, current[name], newest)
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

// checkCRD compares current's CRD name with release's; newest says whether
// release is the newest, whose lifecycle and storage version cur must follow.
func checkCRD(release Release, name string, cur *apiextensionsv1.CustomResourceDefinition, newest bool) ([]Problem, error) {
	if cur == nil {
		return []Problem{{Kind: VersionRemoved, Detail: "the CRD was removed"}}, nil
	}
	old := release.CRDs[name]
	problems := checkNames(old, cur)
	if newest {
		problems = append(problems, checkLifecycle(old, cur)...)
		problems = append(problems, checkStorage(old, cur, release.source())...)
	}
	for i := range old.Spec.Versions {
		ov := &old.Spec.Versions[i]
		cv := version(cur, ov.Name)
		if !ov.Served || cv == nil || !cv.Served {
			continue
		}
		oldSchema, curSchema, err := structuralPair(old, ov, cur, cv)
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
	return problems
}
