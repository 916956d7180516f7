package runpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file gives the run's Pod its volumes and every step its mounts: one
// for each workspace the Task declares, from the source the run binds it to,
// and the results volume of a Task that declares results.

// workspaceVolumes returns one volume for each workspace task declares, in
// the Task's order: the source the run binds it to, else an emptyDir that
// lives as long as the Pod, so that steps share files with no binding at all.
// A binding the Task does not declare is ignored.
func workspaceVolumes(task *v1.Task, run *v1.TaskRun) []corev1.Volume {
	if len(task.Spec.Workspaces) == 0 {
		return nil
	}
	bindings := make(map[string]*v1.WorkspaceBinding, len(run.Spec.Workspaces))
	for i := range run.Spec.Workspaces {
		bindings[run.Spec.Workspaces[i].Name] = &run.Spec.Workspaces[i]
	}
	volumes := make([]corev1.Volume, len(task.Spec.Workspaces))
	for i, ws := range task.Spec.Workspaces {
		volumes[i] = corev1.Volume{Name: runstate.WorkspaceVolume(ws.Name), VolumeSource: workspaceSource(bindings[ws.Name])}
	}
	return volumes
}

// workspaceSource returns the volume source binding names, an emptyDir for
// none. The CRD's schema lets a binding name exactly one source.
func workspaceSource(binding *v1.WorkspaceBinding) corev1.VolumeSource {
	if binding == nil {
		return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	b := binding.DeepCopy()
	switch {
	case b.PersistentVolumeClaim != nil:
		return corev1.VolumeSource{PersistentVolumeClaim: b.PersistentVolumeClaim}
	case b.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: b.ConfigMap}
	case b.Secret != nil:
		return corev1.VolumeSource{Secret: b.Secret}
	case b.EmptyDir != nil:
		return corev1.VolumeSource{EmptyDir: b.EmptyDir}
	default:
		return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
}

// workspaceMounts returns the mounts every step of task has: each workspace
// at its mount path, read-only as declared.
func workspaceMounts(task *v1.Task) []corev1.VolumeMount {
	if len(task.Spec.Workspaces) == 0 {
		return nil
	}
	mounts := make([]corev1.VolumeMount, len(task.Spec.Workspaces))
	for i, ws := range task.Spec.Workspaces {
		mounts[i] = corev1.VolumeMount{
			Name:      runstate.WorkspaceVolume(ws.Name),
			MountPath: runstate.WorkspaceMountPath(ws),
			ReadOnly:  ptr.Deref(ws.ReadOnly, false),
		}
	}
	return mounts
}

// resultsVolumes returns the results volume, an emptyDir that lives as long
// as the Pod, when task declares results; nil otherwise, so that the Pods of
// other Tasks keep their shape.
func resultsVolumes(task *v1.Task) []corev1.Volume {
	if len(task.Spec.Results) == 0 {
		return nil
	}
	return []corev1.Volume{{
		Name:         runstate.ResultsVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}}
}

// resultsMounts returns the mount of the results volume that every step has
// when task declares results: any step may write a result, and a later
// step's value wins.
func resultsMounts(task *v1.Task) []corev1.VolumeMount {
	if len(task.Spec.Results) == 0 {
		return nil
	}
	return []corev1.VolumeMount{{Name: runstate.ResultsVolume, MountPath: runstate.ResultsDir}}
}
