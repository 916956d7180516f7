package controllers

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// This file gives the Pod of a Task that declares results the volume its
// steps write them to. It is pure, so its shape is tested by a table.

// resultsVolumes returns the results volume, an emptyDir that lives as long
// as the Pod, when task declares results; nil otherwise, so that the Pods of
// other Tasks keep their shape.
func resultsVolumes(task *v1beta1.Task) []corev1.Volume {
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
func resultsMounts(task *v1beta1.Task) []corev1.VolumeMount {
	if len(task.Spec.Results) == 0 {
		return nil
	}
	return []corev1.VolumeMount{{Name: runstate.ResultsVolume, MountPath: runstate.ResultsDir}}
}
