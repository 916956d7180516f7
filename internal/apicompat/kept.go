package apicompat

import (
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// CheckKept compares current with the newest frozen release alone and
// reports each property current's schemas have that the release's schema
// of the same version lacks (FieldNotKept): a field, a map's additional
// properties, or one inside a list's items or a map's values.
//
// A rollback by one release applies that release's CRDs, and the API
// server prunes what their schemas lack from every object it then reads
// or writes: a value this release accepted would be lost, and back on this
// release the object would have changed under its owner. So a field is
// added to a release's schema, kept and refused at admission, one release
// before a release accepts it. The gate cannot see admission; a field this
// release keeps for the release after it, refusing it, is a reviewed
// exception (hack/api-compat-exceptions.yaml).
//
// Versions the release lacks are skipped: the storage version rules
// (checkStorage) keep a version from being stored before a release served
// it. So are CRDs the release lacks.
func CheckKept(newest Release, current CRDSet) ([]Problem, error) {
	var problems []Problem
	for _, name := range sortedKeys(current) {
		cur, old := current[name], newest.CRDs[name]
		if old == nil {
			continue
		}
		for i := range cur.Spec.Versions {
			cv := &cur.Spec.Versions[i]
			ov := version(old, cv.Name)
			if !cv.Served || ov == nil {
				continue
			}
			oldSchema, curSchema, err := structuralPair(old, ov, cur, cv)
			if err != nil {
				return nil, err
			}
			k := &keptWalker{release: newest.source()}
			k.node("", oldSchema, curSchema)
			for _, p := range k.problems {
				p.Release, p.CRD, p.Version = newest.Name, name, cv.Name
				problems = append(problems, p)
			}
		}
	}
	sortProblems(problems)
	return problems, nil
}

// keptWalker walks the release's and the current schema of one version
// side by side and collects what the release's lacks.
type keptWalker struct {
	release  string
	problems []Problem
}

func (k *keptWalker) add(path, what string) {
	if path == "" {
		path = "."
	}
	k.problems = append(k.problems, Problem{Path: path, Kind: FieldNotKept,
		Detail: what + " that " + k.release + " (the newest frozen release) lacks: a rollback to it would prune it; " +
			"add it to that release first, keeping it and refusing it at admission"})
}

// node compares one schema node. Below a node the release keeps unknown
// fields of, nothing is pruned; a node whose type changed is
// TypeChanged's to report.
func (k *keptWalker) node(path string, o, n *schema.Structural) {
	if o.XPreserveUnknownFields || o.Type != n.Type {
		return
	}
	for _, name := range sortedKeys(n.Properties) {
		np := n.Properties[name]
		op, ok := o.Properties[name]
		if !ok {
			k.add(path+"."+name, "a field")
			continue
		}
		k.node(path+"."+name, &op, &np)
	}
	oldAllows := o.AdditionalProperties != nil && (o.AdditionalProperties.Bool || o.AdditionalProperties.Structural != nil)
	newAllows := n.AdditionalProperties != nil && (n.AdditionalProperties.Bool || n.AdditionalProperties.Structural != nil)
	switch {
	case newAllows && !oldAllows:
		k.add(path, "additional properties (a map's keys)")
	case newAllows && o.AdditionalProperties.Structural != nil && n.AdditionalProperties.Structural != nil:
		k.node(path+"[*]", o.AdditionalProperties.Structural, n.AdditionalProperties.Structural)
	}
	if o.Items != nil && n.Items != nil {
		k.node(path+"[*]", o.Items, n.Items)
	}
}
