package apicompat

import (
	"fmt"
	"sort"
)

// Kind names a class of breaking change. Exceptions name a Kind, so the
// values are part of the exceptions file's format: never rename one.
type Kind string

// The breaking changes the gate knows.
const (
	FieldRemoved        Kind = "FieldRemoved"
	TypeChanged         Kind = "TypeChanged"
	EnumValueRemoved    Kind = "EnumValueRemoved"
	RequiredAdded       Kind = "RequiredAdded"
	LimitTightened      Kind = "LimitTightened"
	TransitionRuleAdded Kind = "TransitionRuleAdded"
	// RuleMayFailToEvaluate: a CEL rule without oldSelf that may fail to
	// evaluate on a stored value, which no ratcheting spares.
	RuleMayFailToEvaluate Kind = "RuleMayFailToEvaluate"
	ListSemantics         Kind = "ListSemanticsChanged"
	PruningChanged        Kind = "PruningChanged"
	VersionRemoved        Kind = "VersionRemoved"
	VersionUnserved       Kind = "VersionUnserved"
	StorageChanged        Kind = "StorageVersionChanged"
	// StorageNotServedBefore: the storage version moved to one the release
	// before did not serve, so a rollback by one release could not read it.
	StorageNotServedBefore Kind = "StorageVersionNotServedBefore"
	// StoredVersionUnserved: the version the release before stored is no
	// longer served.
	StoredVersionUnserved Kind = "StoredVersionUnserved"
	ScopeChanged          Kind = "ScopeChanged"
	NamesChanged          Kind = "NamesChanged"
	// FieldNotKept: a property the newest frozen release's schema lacks, so
	// that a rollback to it would prune it (CheckKept).
	FieldNotKept Kind = "FieldNotKept"
	// WebhookPathNotServed: a webhook path the configuration names that the
	// newest frozen release's manager does not serve (CheckWebhookPaths).
	WebhookPathNotServed Kind = "WebhookPathNotServed"
)

// Problem is one breaking change, at a path a reviewer can find in the CRD.
type Problem struct {
	// Release is the frozen release the change breaks (its file's name).
	Release string
	// CRD is the CRD's name, e.g. tasks.minitask.dev; for a webhook path,
	// the webhook or the CRD that names it.
	CRD string
	// Version is the API version whose schema changed; empty for CRD-wide changes.
	Version string
	// Path is the field's path in that version's schema, e.g.
	// .spec.steps[*].script; for a webhook path, the URL path.
	Path string
	Kind Kind
	// Detail says what changed, old and new.
	Detail string
}

func (p Problem) String() string {
	where := p.CRD
	if p.Version != "" {
		where += " " + p.Version
	}
	if p.Path != "" {
		where += " " + p.Path
	}
	return fmt.Sprintf("%s: %s: %s (breaks release %s)", where, p.Kind, p.Detail, p.Release)
}

// sortProblems orders problems by where they are, so that output is stable.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Release != b.Release {
			return a.Release < b.Release
		}
		if a.CRD != b.CRD {
			return a.CRD < b.CRD
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Kind < b.Kind
	})
}
