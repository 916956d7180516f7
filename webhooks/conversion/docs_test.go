package conversion

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/testing/markdown"
)

const (
	conversionDoc = "../../docs/conversion.md"
	// bothVersionsTable maps the fields v1alpha1 expresses.
	bothVersionsTable = "| v1alpha1 | v1beta1 and v1 |"
	// annotationTable lists the v1beta1 fields that ride in the annotation.
	annotationTable = "| v1beta1 field | in the annotation |"
	// betaV1Table maps every v1beta1 field to v1.
	betaV1Table = "| v1beta1 | v1 | how |"
	// v1AnnotationTable lists the v1 fields that ride in the annotation's v1 member.
	v1AnnotationTable = "| v1 field | in the annotation's v1 member |"
)

// docField reads a cell such as "TaskRun `spec.taskRef`, ..." as its kind
// and field path (markdown.Table trims a cell's closing backquote).
var docField = regexp.MustCompile("^(Task|TaskRun) `([^`]+)")

// TestConversionDocCoversEveryField holds docs/conversion.md's two tables to
// the Go types, so that no field can be added to either version without
// saying how it converts: every JSON field of v1beta1's Task and TaskRun
// spec, status and step is in one of the tables; every v1alpha1 field is in
// the first; and the second lists exactly what conversion stashes, at the
// paths it stashes them.
func TestConversionDocCoversEveryField(t *testing.T) {
	both := markdown.Table(t, conversionDoc, bothVersionsTable)
	stashed := markdown.Table(t, conversionDoc, annotationTable)

	documented := map[string]bool{}
	var spokeDocumented []string
	for _, row := range both {
		spokeDocumented = append(spokeDocumented, fieldOfCell(t, row[0]))
		documented[fieldOfCell(t, row[1])] = true
	}
	var docStash []string
	for _, row := range stashed {
		field := fieldOfCell(t, row[0])
		documented[field] = true
		// The annotation holds the field at its v1beta1 path, with steps by name.
		_, path, _ := strings.Cut(field, " ")
		path = strings.ReplaceAll(path, "steps[]", "steps[NAME]")
		if at, _, _ := strings.Cut(row[1], "`"); at != path {
			t.Errorf("%s rides in the annotation at %q; the table says %q", field, path, row[1])
		}
		docStash = append(docStash, field)
	}

	hubFields := slices.Concat(
		jsonFields("Task spec.", reflect.TypeFor[v1beta1.TaskSpec]()),
		jsonFields("Task spec.steps[].", reflect.TypeFor[v1beta1.Step]()),
		jsonFields("TaskRun spec.", reflect.TypeFor[v1beta1.TaskRunSpec]()),
		jsonFields("TaskRun status.", reflect.TypeFor[v1beta1.TaskRunStatus]()),
	)
	for _, field := range hubFields {
		if !coveredBy(field, documented) {
			t.Errorf("v1beta1 %s is in neither table of %s: say how it converts", field, conversionDoc)
		}
	}

	spokeFields := slices.Concat(
		jsonFields("Task spec.", reflect.TypeFor[v1alpha1.TaskSpec]()),
		jsonFields("Task spec.steps[].", reflect.TypeFor[v1alpha1.Step]()),
		jsonFields("TaskRun spec.", reflect.TypeFor[v1alpha1.TaskRunSpec]()),
		jsonFields("TaskRun status.", reflect.TypeFor[v1alpha1.TaskRunStatus]()),
	)
	slices.Sort(spokeFields)
	slices.Sort(spokeDocumented)
	if diff := cmp.Diff(spokeFields, spokeDocumented); diff != "" {
		t.Errorf("the v1alpha1 column of %q differs from v1alpha1's fields (-types +doc):\n%s", bothVersionsTable, diff)
	}

	stashFields := slices.Concat(
		stashPaths("Task ", reflect.TypeFor[taskLostFields]()),
		stashPaths("TaskRun ", reflect.TypeFor[taskRunLostFields]()),
	)
	slices.Sort(stashFields)
	slices.Sort(docStash)
	if diff := cmp.Diff(stashFields, docStash); diff != "" {
		t.Errorf("%q differs from what conversion stashes (-code +doc):\n%s", annotationTable, diff)
	}
}

// TestConversionDocCoversV1 holds docs/conversion.md's tables of v1 to the
// Go types, as TestConversionDocCoversEveryField holds v1alpha1's: the
// v1beta1 column of "v1beta1 and v1" lists every v1beta1 field; its v1
// column and the v1 member's table together cover every v1 field; every
// cell names a field its version has; and the v1 member's table lists
// exactly what conversion stashes there, at the paths it stashes them.
func TestConversionDocCoversV1(t *testing.T) {
	betaFields := slices.Concat(
		jsonFields("Task spec.", reflect.TypeFor[v1beta1.TaskSpec]()),
		jsonFields("Task spec.params[].", reflect.TypeFor[v1beta1.ParamSpec]()),
		jsonFields("Task spec.steps[].", reflect.TypeFor[v1beta1.Step]()),
		jsonFields("TaskRun spec.", reflect.TypeFor[v1beta1.TaskRunSpec]()),
		jsonFields("TaskRun spec.params[].", reflect.TypeFor[v1beta1.Param]()),
		jsonFields("TaskRun status.", reflect.TypeFor[v1beta1.TaskRunStatus]()),
	)
	v1Fields := slices.Concat(
		jsonFields("Task spec.", reflect.TypeFor[v1.TaskSpec]()),
		jsonFields("Task spec.params[].", reflect.TypeFor[v1.ParamSpec]()),
		jsonFields("Task spec.steps[].", reflect.TypeFor[v1.Step]()),
		jsonFields("TaskRun spec.", reflect.TypeFor[v1.TaskRunSpec]()),
		jsonFields("TaskRun spec.params[].", reflect.TypeFor[v1.Param]()),
		jsonFields("TaskRun spec.timeouts.", reflect.TypeFor[v1.Timeouts]()),
		jsonFields("TaskRun status.", reflect.TypeFor[v1.TaskRunStatus]()),
	)

	betaDocumented, v1Documented := map[string]bool{}, map[string]bool{}
	for _, row := range markdown.Table(t, conversionDoc, betaV1Table) {
		betaDocumented[fieldOfCell(t, row[0])] = true
		v1Documented[fieldOfCell(t, row[1])] = true
	}
	var docStash []string
	for _, row := range markdown.Table(t, conversionDoc, v1AnnotationTable) {
		field := fieldOfCell(t, row[0])
		v1Documented[field] = true
		kind, _, _ := strings.Cut(field, " ")
		at, _, _ := strings.Cut(row[1], "`")
		docStash = append(docStash, kind+" "+at)
	}

	for _, c := range []struct {
		version    string
		fields     []string
		documented map[string]bool
	}{
		{"v1beta1", betaFields, betaDocumented},
		{"v1", v1Fields, v1Documented},
	} {
		for _, field := range c.fields {
			if !coveredBy(field, c.documented) {
				t.Errorf("%s %s is in no table of v1 in %s: say how it converts", c.version, field, conversionDoc)
			}
		}
		for field := range c.documented {
			if !slices.Contains(c.fields, field) {
				t.Errorf("%s names %s %s, which %s does not have", conversionDoc, c.version, field, c.version)
			}
		}
	}

	stashFields := slices.Concat(
		v1StashPaths("Task ", reflect.TypeFor[taskV1Fields]()),
		v1StashPaths("TaskRun ", reflect.TypeFor[taskRunV1Fields]()),
	)
	slices.Sort(stashFields)
	slices.Sort(docStash)
	if diff := cmp.Diff(stashFields, docStash); diff != "" {
		t.Errorf("%q differs from what conversion stashes in the v1 member (-code +doc):\n%s", v1AnnotationTable, diff)
	}
}

// v1StashPaths returns the paths of the leaves of a v1 member's type, as
// its table writes them: struct fields of the stash's own types are
// walked, and a list of them kept by name is listed field by field (but
// for the name) as LIST[NAME].FIELD.
func v1StashPaths(prefix string, t reflect.Type) []string {
	var paths []string
	for f := range t.Fields() {
		name := jsonName(f)
		if name == "" {
			continue
		}
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath():
			paths = append(paths, v1StashPaths(prefix+name+".", f.Type)...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().PkgPath() == t.PkgPath():
			for _, p := range jsonFields(prefix+name+"[NAME].", f.Type.Elem()) {
				if !strings.HasSuffix(p, "[NAME].name") {
					paths = append(paths, p)
				}
			}
		default:
			paths = append(paths, prefix+name)
		}
	}
	return paths
}

// fieldOfCell returns a table cell's "Kind path".
func fieldOfCell(t *testing.T, cell string) string {
	t.Helper()
	m := docField.FindStringSubmatch(cell)
	if m == nil {
		t.Fatalf("%s: cell %q names no Task or TaskRun field", conversionDoc, cell)
	}
	return m[1] + " " + m[2]
}

// coveredBy reports whether field, or a field within it (spec.taskRef by
// spec.taskRef.name, spec.params by spec.params[].name), is documented.
func coveredBy(field string, documented map[string]bool) bool {
	for doc := range documented {
		if doc == field || strings.HasPrefix(doc, field+".") || strings.HasPrefix(doc, field+"[].") {
			return true
		}
	}
	return false
}

// jsonFields returns prefix + the JSON name of each field of struct type t.
func jsonFields(prefix string, t reflect.Type) []string {
	var fields []string
	for f := range t.Fields() {
		if name := jsonName(f); name != "" {
			fields = append(fields, prefix+name)
		}
	}
	return fields
}

// stashPaths returns the paths of the leaves of a stash type, as the
// annotation table writes them: struct fields of the stash's own types are
// walked, steps' additions listed one by one (but for the name they are
// keyed by), and every other type is a leaf.
func stashPaths(prefix string, t reflect.Type) []string {
	var paths []string
	for f := range t.Fields() {
		name := jsonName(f)
		if name == "" {
			continue
		}
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath():
			paths = append(paths, stashPaths(prefix+name+".", f.Type)...)
		case f.Type == reflect.TypeFor[[]stepLostFields]():
			for _, p := range jsonFields(prefix+name+"[].", reflect.TypeFor[stepLostFields]()) {
				if !strings.HasSuffix(p, "[].name") {
					paths = append(paths, p)
				}
			}
		default:
			paths = append(paths, prefix+name)
		}
	}
	return paths
}

// jsonName is a struct field's JSON name; "" for a field JSON leaves out
// and for embedded ones (TypeMeta and the like).
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || f.Anonymous || !f.IsExported() {
		return ""
	}
	return name
}

// TestDocsStateTheBodyBound holds the bound that docs/conversion.md and
// docs/install.md give operators to MaxReviewBytes.
func TestDocsStateTheBodyBound(t *testing.T) {
	want := fmt.Sprintf("bounded at %d MiB (`MaxReviewBytes`)", MaxReviewBytes>>20)
	for _, doc := range []string{conversionDoc, "../../docs/install.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(data)), " "), want) {
			t.Errorf("%s does not say the body is %s", doc, want)
		}
	}
}
