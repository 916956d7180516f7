package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

// TestValidateSidecarRefs: a sidecar's texts take references as a step's
// do, checked alike, but for results: a sidecar mounts no results volume.
func TestValidateSidecarRefs(t *testing.T) {
	task := func(s v1.Sidecar) *v1.Task {
		return wrappers.Task("default", "t").ParamDefault("tag", "17").Param("args").Workspace("src").Results("digest").
			Sidecars(s).Step("build", "alpine:3", "echo hi > $(results.digest.path)").Obj()
	}
	checkValidateTask(t, map[string]validateTaskCase{
		"declared params and a workspace": {task: task(v1.Sidecar{Name: "db", Image: "postgres:$(params.tag)",
			Script: "serve $(workspaces.src.path)", Env: []corev1.EnvVar{{Name: "TAG", Value: "$(params.tag)"}}})},
		"an undeclared param in the image": {task: task(v1.Sidecar{Name: "db", Image: "postgres:$(params.version)"}),
			want: []string{`spec.sidecars[0].image: Invalid value: "$(params.version)": sidecar "db" uses undeclared param "version"`}},
		"an undeclared workspace in an env value": {task: task(v1.Sidecar{Name: "db", Image: "postgres",
			Env: []corev1.EnvVar{{Name: "DIR", Value: "$(workspaces.cache.path)"}}}),
			want: []string{`spec.sidecars[0].env[0].value: Invalid value: "$(workspaces.cache.path)": sidecar "db" uses undeclared workspace "cache"`}},
		"a result's path": {task: task(v1.Sidecar{Name: "db", Image: "postgres", Args: []string{"$(results.digest.path)"}}),
			want: []string{`spec.sidecars[0].args[0]: Invalid value: "$(results.digest.path)": sidecar "db" uses undeclared result "digest"`}},
		"a malformed reference in a script": {task: task(v1.Sidecar{Name: "db", Image: "postgres", Script: "echo $(params.tag"}),
			want: []string{`spec.sidecars[0].script: Invalid value: sidecar "db": malformed param reference "$(params.tag": missing ")"`}},
	})
}
