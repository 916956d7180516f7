package runstate

import (
	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// This file names where a run's workspaces live in its Pod: the volume each
// one is and the path every step mounts it at. The controller builds the Pod
// from them and the docs promise them, so the two can never disagree.

const (
	// WorkspaceVolumePrefix starts the name of every workspace's volume:
	// ws-NAME, so that no workspace's volume can take a name Kubernetes or a
	// later release gives another volume.
	WorkspaceVolumePrefix = "ws-"

	// DefaultWorkspaceRoot holds the workspaces that declare no mountPath:
	// /workspace/NAME.
	DefaultWorkspaceRoot = "/workspace/"
)

// WorkspaceVolume returns the name of the volume that holds workspace: ws-NAME,
// shortened with a hash when a name of more than 60 characters (valid:
// workspace names may have 63) would make it longer than a volume name may be.
func WorkspaceVolume(workspace string) string {
	return WorkspaceVolumePrefix + bounded(workspace, "", MaxLength-len(WorkspaceVolumePrefix))
}

// WorkspaceMountPath returns where every step sees ws: its mountPath, else
// /workspace/NAME. It is what $(workspaces.NAME.path) expands to.
func WorkspaceMountPath(ws v1.WorkspaceDeclaration) string {
	if ws.MountPath != "" {
		return ws.MountPath
	}
	return DefaultWorkspaceRoot + ws.Name
}

// WorkspacePaths returns, by name, where every step sees each workspace task declares.
func WorkspacePaths(task *v1.Task) map[string]string {
	paths := make(map[string]string, len(task.Spec.Workspaces))
	for _, ws := range task.Spec.Workspaces {
		paths[ws.Name] = WorkspaceMountPath(ws)
	}
	return paths
}
