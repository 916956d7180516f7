package conversion

import (
	"strings"

	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// Objects the API server may hold that valid-object generators never make:
// times no typed decode takes, stashes too big for the annotations, and
// annotations a client forged. The fuzzer's seeds and the random round
// trips both feed them.

// lowercaseTimes rewrites every RFC 3339 time in an object's JSON with a
// lower-case t and z, as a status patch could before the CRDs' patterns:
// the date-time format takes it, metav1.Time does not.
func lowercaseTimes(objectJSON string) string {
	for _, hour := range []string{"T0", "T1", "T2"} {
		objectJSON = strings.ReplaceAll(objectJSON, hour, strings.ToLower(hour))
	}
	return strings.ReplaceAll(objectJSON, `Z"`, `z"`)
}

// oversizedText is a value of n bytes that JSON escaping makes six times
// longer: the worst case for the stash's size.
func oversizedText(n int) string { return strings.Repeat("<", n) }

// oversizedHubTask is a v1beta1 Task, valid by the CRD's limits (param
// defaults of 64 KiB), whose stash would pass the 256 KiB the API server
// allows annotations.
func oversizedHubTask() *v1beta1.Task {
	var params []v1beta1.ParamSpec
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		params = append(params, v1beta1.ParamSpec{Name: name, Default: ptr.To(strings.Repeat("x", 64<<10))})
	}
	return hubTask().Description("big").Params(params...).Obj()
}

// oversizedHubRun is a v1beta1 TaskRun whose params need escaping enough to
// take its stash past 256 KiB, though their text is far smaller.
func oversizedHubRun() *v1beta1.TaskRun {
	return hubRun().Params(v1beta1.Param{Name: "html", Value: oversizedText(50 << 10)}).Obj()
}

// forgedAnnotation is the conversion annotation of issue 11: a negative
// timeout, an unknown spec.status and duplicate params, none of which
// v1beta1 allows.
const forgedAnnotation = `{"v1beta1":{"spec":{"timeout":"-1h","status":"Paused",` +
	`"params":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}}}`

// forgedSpokeRun is a v1alpha1 TaskRun carrying forgedAnnotation.
func forgedSpokeRun() *v1alpha1.TaskRun {
	return spokeRun().Annotation(AnnotationConversionData, forgedAnnotation).Obj()
}
