package cli_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestStartBindings checks start's -w, --serviceaccount and -l: what they
// write into the run, and the refusals, which create nothing.
func TestStartBindings(t *testing.T) {
	h := newHarness(t)
	h.Create(t, buildTask(), greetTask("greet"))

	t.Run("workspaces, a ServiceAccount and labels", func(t *testing.T) {
		got := h.kubectlTask(t, "start", "build", "--name", "build-1",
			"-w", "source=pvc:build-cache", "--workspace", "settings=configmap:build-settings", "-w", "scratch=emptyDir",
			"--serviceaccount", "builder", "-l", "team=platform", "--label", "minitask.dev/purpose=nightly")
		want := result{Stdout: "TaskRun build-1 started in namespace NS\nFollow its logs with: kubectl task logs build-1 -f -n NS\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("start (-want +got):\n%s", diff)
		}
		run := h.TaskRun(t, "build-1")
		wantSpec := v1.TaskRunSpec{
			TaskRef: v1.TaskRef{Name: "build"},
			Workspaces: []v1.WorkspaceBinding{
				{Name: "source", PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "build-cache"}},
				{Name: "settings", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "build-settings"}}},
				{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}},
			},
			ServiceAccountName: "builder",
		}
		if diff := cmp.Diff(wantSpec, run.Spec); diff != "" {
			t.Errorf("TaskRun spec (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"team": "platform", "minitask.dev/purpose": "nightly"}, run.Labels); diff != "" {
			t.Errorf("TaskRun labels (-want +got):\n%s", diff)
		}
	})

	t.Run("a Secret, and no flags of release 3 leave the spec as before", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want v1.TaskRunSpec
		}{
			{
				args: []string{"start", "build", "--name", "build-secret", "-w", "settings=secret:build-creds"},
				want: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "build"},
					Workspaces: []v1.WorkspaceBinding{{Name: "settings", Secret: &corev1.SecretVolumeSource{SecretName: "build-creds"}}}},
			},
			{
				args: []string{"start", "build", "--name", "build-bare"},
				want: v1.TaskRunSpec{TaskRef: v1.TaskRef{Name: "build"}},
			},
		} {
			if got := h.kubectlTask(t, tc.args...); got.Code != 0 {
				t.Fatalf("kubectl task %v: %+v", tc.args, got)
			}
			run := h.TaskRun(t, tc.args[3])
			if diff := cmp.Diff(tc.want, run.Spec); diff != "" {
				t.Errorf("%s spec (-want +got):\n%s", run.Name, diff)
			}
			if run.Labels != nil {
				t.Errorf("%s has labels %v, want none", run.Name, run.Labels)
			}
		}
	})

	t.Run("a ServiceAccount its user may not use", func(t *testing.T) {
		// dev may start runs, but neither use ServiceAccounts nor create Pods:
		// the API server's webhook refuses, and start passes on its reason.
		h.Grant(t, "dev", rbacv1.PolicyRule{APIGroups: []string{"minitask.dev"}, Resources: []string{"taskruns", "tasks"}, Verbs: []string{"get", "list", "create"}})
		before := h.TaskRunNames(t)
		got := h.kubectlTask(t, "start", "build", "--name", "build-denied", "--serviceaccount", "builder", "--as", "dev")
		want := result{Code: 1, Stderr: `error: admission webhook "vtaskrun-serviceaccount.minitask.dev" denied the request: ` +
			`taskruns.minitask.dev "build-denied" is forbidden: spec.serviceAccountName: Forbidden: user "dev" may not use ServiceAccount "builder" in namespace "NS": ` +
			`needs "use" on serviceaccounts "builder" or "create" on pods` + "\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("start --serviceaccount as dev (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
			t.Errorf("TaskRuns after the refusal (-before +after):\n%s", diff)
		}
	})

	refusals := map[string]struct {
		args    []string
		wantErr string
	}{
		"a workspace the Task does not declare": {
			args:    []string{"start", "build", "-w", "sorce=pvc:build-cache"},
			wantErr: `Task "build" has no workspace "sorce"; its workspaces are: source, settings, scratch; see 'kubectl task start --help'`,
		},
		"a workspace for a Task that declares none": {
			args:    []string{"start", "greet", "-p", "greeting=hi", "-w", "source=emptyDir"},
			wantErr: `Task "greet" has no workspace "source"; it declares no workspaces; see 'kubectl task start --help'`,
		},
		"a workspace bound twice": {
			args:    []string{"start", "build", "-w", "source=emptyDir", "--workspace", "source=pvc:build-cache"},
			wantErr: `-w source is given twice; bind each workspace once; see 'kubectl task start --help'`,
		},
		"an unknown kind of source": {
			args:    []string{"start", "build", "-w", "source=git:https://example.com/app.git"},
			wantErr: `malformed -w "source=git:https://example.com/app.git": unknown source "git"; it is one of emptyDir, pvc:CLAIM, configmap:NAME and secret:NAME; see 'kubectl task start --help'`,
		},
		"a claim with no name": {
			args:    []string{"start", "build", "-w", "source=pvc"},
			wantErr: `malformed -w "source=pvc": pvc needs a name, as in -w source=pvc:NAME; see 'kubectl task start --help'`,
		},
		"a label with no value": {
			args:    []string{"start", "build", "-l", "team"},
			wantErr: `malformed -l "team": it needs key=value, e.g. -l team=build; see 'kubectl task start --help'`,
		},
		"a label key that is no qualified name": {
			args:    []string{"start", "build", "-l", "Team Name=platform"},
			wantErr: `malformed -l "Team Name=platform": its key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'); see 'kubectl task start --help'`,
		},
		"a label given twice": {
			args:    []string{"start", "build", "-l", "team=a", "-l", "team=b"},
			wantErr: `-l team is given twice; give each label once; see 'kubectl task start --help'`,
		},
		"a ServiceAccount name that is no DNS-1123 subdomain": {
			args:    []string{"start", "build", "--serviceaccount", "Builder"},
			wantErr: `--serviceaccount "Builder" is not a ServiceAccount name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); see 'kubectl task start --help'`,
		},
		"an empty ServiceAccount name": {
			args:    []string{"start", "build", "--serviceaccount", ""},
			wantErr: `--serviceaccount needs the name of a ServiceAccount; leave the flag out for none; see 'kubectl task start --help'`,
		},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			before := h.TaskRunNames(t)
			got := h.kubectlTask(t, tc.args...)
			if diff := cmp.Diff(result{Code: 2, Stderr: "error: " + tc.wantErr + "\n"}, got); diff != "" {
				t.Errorf("kubectl task %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(before, h.TaskRunNames(t)); diff != "" {
				t.Errorf("TaskRuns after the refusal (-before +after):\n%s", diff)
			}
		})
	}
}
