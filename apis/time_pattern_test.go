package apis_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/config/crd"
)

// TestTimePatternIsOneConstant walks every version of both CRDs and checks
// that each time field (format date-time) of our own types carries
// v1beta1.TimePattern, which the markers cannot name, and that no time
// field lacks it but the one a core type brings.
func TestTimePatternIsOneConstant(t *testing.T) {
	// status.conditions[].lastTransitionTime is metav1.Condition's, which
	// takes no marker.
	conditionTimes := []string{
		"taskruns.minitask.dev v1 .status.conditions[*].lastTransitionTime",
		"taskruns.minitask.dev v1beta1 .status.conditions[*].lastTransitionTime",
	}
	want := []string{
		"taskruns.minitask.dev v1 .status.attempts[*].completionTime",
		"taskruns.minitask.dev v1 .status.attempts[*].startTime",
		"taskruns.minitask.dev v1 .status.completionTime",
		"taskruns.minitask.dev v1 .status.sidecars[*].finishedAt",
		"taskruns.minitask.dev v1 .status.sidecars[*].startedAt",
		"taskruns.minitask.dev v1 .status.startTime",
		"taskruns.minitask.dev v1 .status.steps[*].finishedAt",
		"taskruns.minitask.dev v1 .status.steps[*].startedAt",
		"taskruns.minitask.dev v1alpha1 .status.finishTime",
		"taskruns.minitask.dev v1alpha1 .status.startTime",
		"taskruns.minitask.dev v1beta1 .status.attempts[*].completionTime",
		"taskruns.minitask.dev v1beta1 .status.attempts[*].startTime",
		"taskruns.minitask.dev v1beta1 .status.completionTime",
		"taskruns.minitask.dev v1beta1 .status.startTime",
		"taskruns.minitask.dev v1beta1 .status.steps[*].finishedAt",
		"taskruns.minitask.dev v1beta1 .status.steps[*].startedAt",
	}
	var got []string
	for _, file := range []string{crd.TasksFile, crd.TaskRunsFile} {
		def := readCRD(t, file)
		for _, version := range def.Spec.Versions {
			walkSchema(version.Schema.OpenAPIV3Schema, "", func(path string, s *apiextensionsv1.JSONSchemaProps) {
				if s.Format != "date-time" {
					return
				}
				where := def.Name + " " + version.Name + " " + path
				switch {
				case slices.Contains(conditionTimes, where):
				case s.Pattern != v1beta1.TimePattern:
					t.Errorf("%s: pattern %q, want v1beta1.TimePattern", where, s.Pattern)
				default:
					got = append(got, where)
				}
			})
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("time fields with v1beta1.TimePattern (-want +got):\n%s", diff)
	}

	doc, err := os.ReadFile("../docs/conversion.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "`"+v1beta1.TimePattern+"`") {
		t.Errorf("docs/conversion.md does not quote v1beta1.TimePattern")
	}
}

// TestTimeValidationAdmitsOnlyWhatGoReads judges times with the validator
// the API server builds from the CRD's status.startTime (its date-time
// format and pattern, as every time field has them) and checks that it
// admits exactly what metav1.Time decodes, but for what RFC 3339 refuses and
// Go's lenient parser still reads (rfc3339Refuses). Each number of a time
// is tried from 00 to 99, every day of every month in common and leap
// years, and the forms Go and the date-time format read differently.
func TestTimeValidationAdmitsOnlyWhatGoReads(t *testing.T) {
	validator := timeValidator(t)
	var mismatches []string
	for _, value := range timeCandidates() {
		admitted := len(apiservervalidation.ValidateCustomResource(nil, value, validator)) == 0
		goReads := json.Unmarshal([]byte(`"`+value+`"`), &metav1.Time{}) == nil
		if admitted != (goReads && !rfc3339Refuses(value)) {
			mismatches = append(mismatches, fmt.Sprintf("%s: admitted %t, metav1.Time reads it %t", value, admitted, goReads))
		}
	}
	if len(mismatches) > 0 {
		t.Errorf("%d times the CRD and Go judge apart:\n%s", len(mismatches), strings.Join(mismatches, "\n"))
	}
}

// rfc3339Refuses reports whether value breaks RFC 3339's grammar in a way
// Go's time.Parse lets through (go.dev/issue/54580): a zone offset hour of
// 24 or minute of 60, a comma before the fraction, a one-digit hour. The
// CRD refuses them, so that what it admits never depends on that leniency.
func rfc3339Refuses(value string) bool {
	return regexp.MustCompile(`[+-](24:[0-9]{2}|[0-9]{2}:60)$|,|T[0-9]:`).MatchString(value)
}

// timeCandidates are the times TestTimeValidationAdmitsOnlyWhatGoReads
// tries.
func timeCandidates() []string {
	two := func(n int) string { return fmt.Sprintf("%02d", n) }
	var values []string
	for n := range 100 {
		values = append(values,
			"2024-"+two(n)+"-01T10:00:00Z",
			"2024-05-01T"+two(n)+":00:00Z",
			"2024-05-01T10:"+two(n)+":00Z",
			"2024-05-01T10:00:"+two(n)+"Z",
			"2024-05-01T10:00:00+"+two(n)+":00",
			"2024-05-01T10:00:00-"+two(n)+":30",
			"2024-05-01T10:00:00+05:"+two(n),
			"2024-05-01T10:00:00-23:"+two(n),
			"2024-05-01T10:00:00+24:"+two(n),
		)
	}
	for _, year := range []string{"0000", "1900", "2000", "2023", "2024", "9999"} {
		for month := 1; month <= 12; month++ {
			for day := 0; day <= 32; day++ {
				values = append(values, year+"-"+two(month)+"-"+two(day)+"T00:00:00Z")
			}
		}
	}
	return append(values,
		"2024-05-01T10:00:00.5Z",
		"2024-05-01T10:00:00.123456789123+02:00",
		"2024-05-01T10:00:00,5Z",
		"2024-05-01T10:00:00.Z",
		"2024-05-01T10:00:00-00:00",
		"2024-05-01t10:00:00z",
		"2024-05-01T10:00:00z",
		"2024-05-01 10:00:00Z",
		"2024-05-01T10:00:00",
		"2024-05-01T10:00:00+0200",
		"2024-05-01T10:00:00+2:00",
		"2024-05-01T1:00:00Z",
		"2024-5-01T10:00:00Z",
		"24-05-01T10:00:00Z",
		"12024-05-01T10:00:00Z",
		"2024-05-01T10:00Z",
		"2024-05-01",
		"",
	)
}

// timeValidator is the API server's validator of v1beta1 TaskRun's
// status.startTime, built from the CRD as the API server builds it.
func timeValidator(t *testing.T) apiservervalidation.SchemaValidator {
	t.Helper()
	def := readCRD(t, crd.TaskRunsFile)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(def, &internal, nil); err != nil {
		t.Fatal(err)
	}
	for _, version := range internal.Spec.Versions {
		if version.Name != v1beta1.GroupVersion.Version {
			continue
		}
		startTime := version.Schema.OpenAPIV3Schema.Properties["status"].Properties["startTime"]
		validator, _, err := apiservervalidation.NewSchemaValidator(&startTime)
		if err != nil {
			t.Fatal(err)
		}
		return validator
	}
	t.Fatalf("%s has no version %s", crd.TaskRunsFile, v1beta1.GroupVersion.Version)
	return nil
}

// readCRD reads one of the CRDs the manager embeds (config/crd/bases).
func readCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := crd.Bases.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	def := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, def); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	return def
}

// walkSchema calls visit with every node of s and its path: .a.b for
// properties, [*] for list items and map values.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, path string, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(path, s)
	for name, property := range s.Properties {
		walkSchema(&property, path+"."+name, visit)
	}
	if s.Items != nil {
		walkSchema(s.Items.Schema, path+"[*]", visit)
	}
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, path+"[*]", visit)
	}
}
