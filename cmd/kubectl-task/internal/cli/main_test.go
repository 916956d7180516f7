package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/cli"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runlogs"
	"github.com/minitask-dev/minitask/controllers"
	"github.com/minitask-dev/minitask/internal/runstate"
	"github.com/minitask-dev/minitask/internal/testenv"
)

// env is the API server the package's tests share; nil under -short.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env) }

// harness is one test's namespace, the clock its commands see, and where
// their step logs come from.
type harness struct {
	ns  string
	now time.Time
	// logs, if set, replaces the Pod logs API as the commands' log source.
	logs runlogs.Source
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	if env == nil {
		t.Skip("-short: needs a kube-apiserver and etcd")
	}
	return &harness{ns: env.Namespace(t), now: time.Now().UTC().Truncate(time.Second)}
}

// result is what one kubectl task command did.
type result struct {
	Code           int
	Stdout, Stderr string
}

// kubectlTask runs the plugin in-process against the test API server, in the
// harness's namespace, and returns what it printed, with the namespace's
// generated name replaced by NS.
func (h *harness) kubectlTask(t *testing.T, args ...string) result {
	t.Helper()
	args = append(args, "--kubeconfig", env.Kubeconfig, "-n", h.ns)
	return h.execute(t, args)
}

// execute runs the plugin with exactly args.
func (h *harness) execute(t *testing.T, args []string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	o := cli.Options{
		Streams:      genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:          func() time.Time { return h.now },
		PollInterval: 50 * time.Millisecond,
	}
	if h.logs != nil {
		o.LogSource = func(*cli.Clients, string, string) runlogs.Source { return h.logs }
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitTimeout)
	defer cancel()
	code := cli.Execute(ctx, args, o)
	fix := func(s string) string { return strings.ReplaceAll(s, h.ns, "NS") }
	return result{Code: code, Stdout: fix(out.String()), Stderr: fix(errOut.String())}
}

// cannedLogs serves the same log for a step of any run, in the steps' order of
// the test Task; a step with no log has not started.
type cannedLogs map[string]string

func (c cannedLogs) Steps(context.Context, bool) ([]string, error) {
	return []string{"prepare", "say"}, nil
}

func (c cannedLogs) Open(_ context.Context, step string, _ bool) (io.ReadCloser, error) {
	log, ok := c[step]
	if !ok {
		return nil, runlogs.ErrNotStarted
	}
	return io.NopCloser(strings.NewReader(log)), nil
}

// startController runs the TaskRun controller on the harness's namespace.
func (h *harness) startController(t *testing.T) {
	t.Helper()
	env.StartManager(t, func(mgr ctrl.Manager) error {
		return (&controllers.TaskRunReconciler{Client: mgr.GetClient(), DefaultTimeout: time.Hour}).SetupWithManager(mgr)
	}, func(o *ctrl.Options) {
		o.Cache = controllers.CacheOptions()
		o.Cache.DefaultNamespaces = map[string]cache.Config{h.ns: {}}
	})
}

// greetTask is the Task the tests run: one param that needs a value, one with
// a default, and two steps.
func greetTask(name string) *v1beta1.Task {
	return &v1beta1.Task{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.TaskSpec{
			Description: "Says hello",
			Params: []v1beta1.ParamSpec{
				{Name: "greeting", Description: "What to say"},
				{Name: "name", Description: "Who to greet", Default: ptr.To("world")},
			},
			Steps: []v1beta1.Step{
				{Name: "prepare", Image: "alpine:3", Script: "echo preparing"},
				{Name: "say", Image: "alpine:3", Script: `echo "$(params.greeting), $(params.name)"`},
			},
		},
	}
}

// grant gives user, in the harness's namespace, what rules allow and
// nothing more; commands act as that user with --as.
func (h *harness) grant(t *testing.T, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	h.create(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})
}

func (h *harness) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	env.Create(t, h.ns, objs...)
}

func (h *harness) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: h.ns, Name: name}
}

func (h *harness) run(t *testing.T, name string) *v1beta1.TaskRun {
	t.Helper()
	run := &v1beta1.TaskRun{}
	if err := env.Client.Get(context.Background(), h.key(name), run); err != nil {
		t.Fatalf("getting TaskRun %s: %v", name, err)
	}
	return run
}

func (h *harness) runs(t *testing.T) []string {
	t.Helper()
	var list v1beta1.TaskRunList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(h.ns)); err != nil {
		t.Fatalf("listing TaskRuns: %v", err)
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
	}
	return names
}

// waitForSummary waits until the run's status reads want, e.g. Running.
func (h *harness) waitForSummary(t *testing.T, name, want string) *v1beta1.TaskRun {
	t.Helper()
	var run *v1beta1.TaskRun
	testenv.Eventually(t, func() (bool, string) {
		run = h.run(t, name)
		got := runstate.Summary(run)
		return got == want, got
	}, "TaskRun %s to be %s", name, want)
	return run
}

// setRunStatus writes a run's status, as the controller would.
func (h *harness) setRunStatus(t *testing.T, name string, status v1beta1.TaskRunStatus) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run := h.run(t, name)
		run.Status = status
		return env.Client.Status().Update(context.Background(), run)
	})
	if err != nil {
		t.Fatalf("writing the status of TaskRun %s: %v", name, err)
	}
}

// kubelet waits for a run's Pod and writes its status as the kubelet would:
// phase, and the steps' container states in order (those not given wait).
func (h *harness) kubelet(t *testing.T, run string, phase corev1.PodPhase, steps ...corev1.ContainerState) {
	t.Helper()
	name := run + "-pod"
	testenv.Eventually(t, func() (bool, string) {
		err := env.Client.Get(context.Background(), h.key(name), &corev1.Pod{})
		return err == nil, fmt.Sprint(err)
	}, "Pod %s to exist", name)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := env.Client.Get(context.Background(), h.key(name), pod); err != nil {
			return err
		}
		statuses := func(containers []corev1.Container, offset int) []corev1.ContainerStatus {
			var out []corev1.ContainerStatus
			for i, c := range containers {
				state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
				if offset+i < len(steps) {
					state = steps[offset+i]
				}
				out = append(out, corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: state})
			}
			return out
		}
		pod.Status = corev1.PodStatus{
			Phase:                 phase,
			InitContainerStatuses: statuses(pod.Spec.InitContainers, 0),
			ContainerStatuses:     statuses(pod.Spec.Containers, len(pod.Spec.InitContainers)),
		}
		return env.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("writing the status of Pod %s: %v", name, err)
	}
}

func running(started time.Time) corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
}

func exited(code int32, started, finished time.Time) corev1.ContainerState {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
	}}
}
