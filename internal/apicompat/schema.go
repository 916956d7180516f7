package apicompat

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// schemaDiffer walks the old and the new structural schema of one version
// side by side and collects what would break.
type schemaDiffer struct {
	problems []Problem
}

// compareSchemas returns the breaking changes from old to new, each with its
// Path, Kind and Detail set.
func compareSchemas(old, new *schema.Structural) []Problem {
	d := &schemaDiffer{}
	d.node("", old, new, true)
	return d.problems
}

func (d *schemaDiffer) add(path string, kind Kind, format string, args ...any) {
	if path == "" {
		path = "."
	}
	d.problems = append(d.problems, Problem{Path: path, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// tightened records a validation that now refuses values the old schema
// accepted. The API server ratchets such a validation (lets an update keep a
// value it does not change) only where it can correlate the new value with the
// old one: along object properties, map values and lists of listType=map.
// Inside any other list it refuses the update of every stored object that
// breaks the new rule, so the change breaks stored objects.
func (d *schemaDiffer) tightened(path string, ratchets bool, format string, args ...any) {
	if ratchets {
		return
	}
	d.add(path, LimitTightened, format+" inside a list the API server cannot ratchet (not listType=map)", args...)
}

// node compares one schema node. ratchets says whether the API server can
// correlate values at path with the old object's on update.
func (d *schemaDiffer) node(path string, o, n *schema.Structural, ratchets bool) {
	if o.Type != n.Type {
		d.add(path, TypeChanged, "type %q became %q", o.Type, n.Type)
		return
	}
	if o.XIntOrString != n.XIntOrString || o.XEmbeddedResource != n.XEmbeddedResource {
		d.add(path, TypeChanged, "x-kubernetes-int-or-string or x-kubernetes-embedded-resource changed")
	}
	if o.XPreserveUnknownFields && !n.XPreserveUnknownFields {
		d.add(path, PruningChanged, "x-kubernetes-preserve-unknown-fields removed: stored unknown fields would be pruned")
	}
	if listType(o) != listType(n) {
		d.add(path, ListSemantics, "x-kubernetes-list-type %q became %q", listType(o), listType(n))
	} else if !slices.Equal(o.XListMapKeys, n.XListMapKeys) {
		d.add(path, ListSemantics, "x-kubernetes-list-map-keys %v became %v", o.XListMapKeys, n.XListMapKeys)
	}
	if mapType(o) != mapType(n) {
		d.add(path, ListSemantics, "x-kubernetes-map-type %q became %q", mapType(o), mapType(n))
	}
	if o.Nullable && !n.Nullable {
		d.tightened(path, ratchets, "no longer nullable")
	}
	d.values(path, valueValidation(o), valueValidation(n), ratchets)
	d.rules(path, o, n, ratchets)

	for _, name := range sortedKeys(o.Properties) {
		op := o.Properties[name]
		np, ok := n.Properties[name]
		if !ok {
			if !n.XPreserveUnknownFields {
				d.add(path+"."+name, FieldRemoved, "field removed")
			}
			continue
		}
		d.node(path+"."+name, &op, &np, ratchets)
	}
	d.additionalProperties(path, o, n, ratchets)
	if o.Items != nil && n.Items != nil {
		d.node(path+"[*]", o.Items, n.Items, ratchets && listType(o) == "map")
	}
}

func (d *schemaDiffer) additionalProperties(path string, o, n *schema.Structural, ratchets bool) {
	oldAllows := o.AdditionalProperties != nil && (o.AdditionalProperties.Bool || o.AdditionalProperties.Structural != nil)
	newAllows := n.AdditionalProperties != nil && (n.AdditionalProperties.Bool || n.AdditionalProperties.Structural != nil)
	switch {
	case oldAllows && !newAllows && !n.XPreserveUnknownFields:
		d.add(path, FieldRemoved, "additionalProperties no longer allowed: stored keys would be pruned")
	case oldAllows && newAllows && o.AdditionalProperties.Structural != nil && n.AdditionalProperties.Structural != nil:
		d.node(path+"[*]", o.AdditionalProperties.Structural, n.AdditionalProperties.Structural, ratchets)
	}
}

// values compares the value validations of one node.
func (d *schemaDiffer) values(path string, o, n *schema.ValueValidation, ratchets bool) {
	for _, name := range n.Required {
		if !slices.Contains(o.Required, name) {
			d.add(path+"."+name, RequiredAdded, "field became required")
		}
	}
	if n.Format != o.Format && n.Format != "" {
		d.tightened(path, ratchets, "format %q became %q", o.Format, n.Format)
	}
	if n.Pattern != o.Pattern && n.Pattern != "" {
		d.tightened(path, ratchets, "pattern %q became %q", o.Pattern, n.Pattern)
	}
	for _, l := range []struct {
		name     string
		old, new *int64
		isMax    bool
	}{
		{"maxLength", o.MaxLength, n.MaxLength, true},
		{"minLength", o.MinLength, n.MinLength, false},
		{"maxItems", o.MaxItems, n.MaxItems, true},
		{"minItems", o.MinItems, n.MinItems, false},
		{"maxProperties", o.MaxProperties, n.MaxProperties, true},
		{"minProperties", o.MinProperties, n.MinProperties, false},
	} {
		if limitTightened(l.old, l.new, l.isMax) {
			d.tightened(path, ratchets, "%s %s became %s", l.name, show(l.old), show(l.new))
		}
	}
	if limitTightened(o.Maximum, n.Maximum, true) || (n.ExclusiveMaximum && !o.ExclusiveMaximum && n.Maximum != nil) {
		d.tightened(path, ratchets, "maximum %s became %s", show(o.Maximum), show(n.Maximum))
	}
	if limitTightened(o.Minimum, n.Minimum, false) || (n.ExclusiveMinimum && !o.ExclusiveMinimum && n.Minimum != nil) {
		d.tightened(path, ratchets, "minimum %s became %s", show(o.Minimum), show(n.Minimum))
	}
	if n.MultipleOf != nil && (o.MultipleOf == nil || *o.MultipleOf != *n.MultipleOf) {
		d.tightened(path, ratchets, "multipleOf %s became %s", show(o.MultipleOf), show(n.MultipleOf))
	}
	if n.UniqueItems && !o.UniqueItems {
		d.tightened(path, ratchets, "uniqueItems added")
	}
	d.enum(path, o, n, ratchets)
	if !reflect.DeepEqual(o.AllOf, n.AllOf) || !reflect.DeepEqual(o.AnyOf, n.AnyOf) ||
		!reflect.DeepEqual(o.OneOf, n.OneOf) || !reflect.DeepEqual(o.Not, n.Not) {
		d.tightened(path, ratchets, "allOf, anyOf, oneOf or not changed")
	}
}

func (d *schemaDiffer) enum(path string, o, n *schema.ValueValidation, ratchets bool) {
	if len(n.Enum) == 0 {
		return
	}
	if len(o.Enum) == 0 {
		d.tightened(path, ratchets, "enum added")
		return
	}
	for _, v := range o.Enum {
		if !slices.ContainsFunc(n.Enum, func(w schema.JSON) bool { return reflect.DeepEqual(v.Object, w.Object) }) {
			d.add(path, EnumValueRemoved, "enum value %v removed", v.Object)
		}
	}
}

// rules compares the CEL rules of one node by their text. A rule that reads
// oldSelf is a transition rule: the API server evaluates it on every update
// whose old value it can find, so even ratcheting does not spare stored
// objects from it. Any other rule ratchets what it judges false, but not
// what it fails to evaluate: the API server reports an evaluation error on
// every write, however unchanged the value (see mayFailToEvaluate).
func (d *schemaDiffer) rules(path string, o, n *schema.Structural, ratchets bool) {
	for _, r := range n.XValidations {
		if slices.ContainsFunc(o.XValidations, func(old apiextensionsv1.ValidationRule) bool { return old.Rule == r.Rule }) {
			continue
		}
		if strings.Contains(r.Rule, "oldSelf") {
			d.add(path, TransitionRuleAdded, "transition rule added: %s", r.Rule)
			continue
		}
		if why, ok := mayFailToEvaluate(r.Rule, n); ok {
			d.add(path, RuleMayFailToEvaluate, "CEL rule added that %s, which may fail to evaluate on a stored value; "+
				"the API server does not ratchet that: %s", why, r.Rule)
			continue
		}
		d.tightened(path, ratchets, "CEL rule added: %s", r.Rule)
	}
}

// parsesAtRunTime matches a call of a CEL function that parses its string
// argument when the rule runs, on an argument that is no literal:
// timestamp(self.at), duration(self.timeout), quantity(self.size), ...
var parsesAtRunTime = regexp.MustCompile(`\b(timestamp|duration|quantity|url|ip|cidr|semver)\(\s*[^'"\s)]`)

// mayFailToEvaluate reports, with why, whether rule on node can fail to
// evaluate on a value an earlier schema admitted: it reads a date-time
// value, which the API server hands CEL as a timestamp, parsed as Go does,
// while the date-time format admits what Go cannot parse (2024-05-01t10:00:00z,
// a zone offset of +25:00); or it parses a field's text itself.
//
// It cannot tell every such rule: one that reads an optional field without
// has(), indexes past a list's end or overflows an integer fails to
// evaluate too. Review each new rule for those.
func mayFailToEvaluate(rule string, node *schema.Structural) (string, bool) {
	if m := parsesAtRunTime.FindStringSubmatch(rule); m != nil {
		return "parses a value with " + m[1] + "()", true
	}
	if valueValidation(node).Format == "date-time" {
		return "reads a date-time value (self)", true
	}
	var found string
	walkProperties(node, func(name string, s *schema.Structural) {
		if found != "" || valueValidation(s).Format != "date-time" {
			return
		}
		selected := regexp.MustCompile(`(\.\??|\[\??\s*['"])\s*` + regexp.QuoteMeta(name) + `\b`)
		if selected.MatchString(rule) {
			found = name
		}
	})
	if found != "" {
		return "reads the date-time value " + found, true
	}
	return "", false
}

// walkProperties calls visit with every property below s, by name, through
// list items and map values.
func walkProperties(s *schema.Structural, visit func(string, *schema.Structural)) {
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		visit(name, &p)
		walkProperties(&p, visit)
	}
	if s.Items != nil {
		walkProperties(s.Items, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		walkProperties(s.AdditionalProperties.Structural, visit)
	}
}

func listType(s *schema.Structural) string {
	if s.XListType == nil || *s.XListType == "" {
		if s.Type == "array" {
			return "atomic"
		}
		return ""
	}
	return *s.XListType
}

func mapType(s *schema.Structural) string {
	if s.XMapType == nil || *s.XMapType == "" {
		if s.Type == "object" {
			return "granular"
		}
		return ""
	}
	return *s.XMapType
}

func valueValidation(s *schema.Structural) *schema.ValueValidation {
	if s.ValueValidation == nil {
		return &schema.ValueValidation{}
	}
	return s.ValueValidation
}

// limitTightened reports whether a limit was added, or moved to refuse more.
func limitTightened[N int64 | float64](old, new *N, isMax bool) bool {
	switch {
	case new == nil:
		return false
	case old == nil:
		return true
	case isMax:
		return *new < *old
	default:
		return *new > *old
	}
}

func show[N int64 | float64](p *N) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
