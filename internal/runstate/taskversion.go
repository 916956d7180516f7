package runstate

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// AnnotationTaskVersion names, on the Pod of a run that runs its Task as
// read, the Task the Pod was built from: "UID/generation/resourceVersion".
// The reconcile that creates a run's first Pod leaves its status to the
// next one (docs/lifecycle.md, "Status writes"), which pins that Task's spec
// in status.taskSpec: the Task as the cache holds it if it still has that
// UID and generation, else as it stood at that resourceVersion, read from
// the API server. A Pod made by release 6 has none.
const AnnotationTaskVersion = "minitask.dev/task-version"

// TaskVersion is one version of one Task: its UID, and its generation and
// resourceVersion then.
type TaskVersion struct {
	UID             types.UID
	Generation      int64
	ResourceVersion string
}

// TaskVersionOf returns task's version, and whether it has one: a Task
// read from the API server does, one made of a pinned or an inline spec
// (TaskToRun) does not.
func TaskVersionOf(task *v1.Task) (TaskVersion, bool) {
	v := TaskVersion{UID: task.UID, Generation: task.Generation, ResourceVersion: task.ResourceVersion}
	return v, v.valid()
}

// String is the version as AnnotationTaskVersion holds it.
func (v TaskVersion) String() string {
	return string(v.UID) + "/" + strconv.FormatInt(v.Generation, 10) + "/" + v.ResourceVersion
}

// PodTaskVersion returns the Task version pod's AnnotationTaskVersion
// names, and whether it names a well-formed one. Anything else (no
// annotation, or one edited into another shape) names none: the run is
// then pinned only at its next Pod, as one release 6 started.
func PodTaskVersion(pod *corev1.Pod) (TaskVersion, bool) {
	if pod == nil {
		return TaskVersion{}, false
	}
	parts := strings.Split(pod.Annotations[AnnotationTaskVersion], "/")
	if len(parts) != 3 {
		return TaskVersion{}, false
	}
	generation, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return TaskVersion{}, false
	}
	v := TaskVersion{UID: types.UID(parts[0]), Generation: generation, ResourceVersion: parts[2]}
	return v, v.valid()
}

// Of reports whether task is this version's Task as it stood then: the
// same UID and generation, and so the same spec (the API server moves a
// Task's generation on every change to its spec).
func (v TaskVersion) Of(task *v1.Task) bool {
	return task != nil && task.UID == v.UID && task.Generation == v.Generation
}

// valid says that every part is there and the resourceVersion is a
// decimal number, as the API server's are (a forged one reads nothing).
func (v TaskVersion) valid() bool {
	if v.UID == "" || v.Generation <= 0 || len(v.ResourceVersion) > 20 {
		return false
	}
	_, err := strconv.ParseUint(v.ResourceVersion, 10, 64)
	return err == nil
}
