//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// manager is bin/manager running as a process against a test's cluster, so
// that a test can stop it gracefully or kill it outright. Its output goes to
// a file, printed if the test fails.
type manager struct {
	t testing.TB
	c *cluster
	// bin is the manager's executable: bin/manager, or an earlier
	// release's (startManagerBinary).
	bin     string
	args    []string
	logPath string
	starts  int
	// metricsAddr and pprofAddr are where its metrics and profiles are
	// served over HTTP, if they are (startManagerWithMetrics).
	metricsAddr, pprofAddr string
	// webhookPort is where its webhooks are served, if not at the port
	// the webhook configuration names (startReplica).
	webhookPort string

	cmd *exec.Cmd
	// exited is closed once the process has exited, after err is set.
	exited chan struct{}
	err    error
}

// startManager starts bin/manager with the flags hack/local-cluster.sh gives
// it and extraArgs, and waits until it is ready. It stops the manager when
// the test ends, before the cluster is deleted.
func startManager(t testing.TB, c *cluster, extraArgs ...string) *manager {
	t.Helper()
	bin := filepath.Join(c.repo, "bin/manager")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: build it first (make test-e2e does)", bin)
	}
	return startManagerBinary(t, c, bin, extraArgs...)
}

// startManagerBinary is startManager with the manager executable bin, such
// as an earlier release's: every release takes the same flags.
func startManagerBinary(t testing.TB, c *cluster, bin string, extraArgs ...string) *manager {
	t.Helper()
	m := &manager{
		t: t, c: c, bin: bin, logPath: filepath.Join(t.TempDir(), "manager.log"),
		args: []string{
			"--kubeconfig=" + c.env["KUBECONFIG"],
			"--webhook-host=127.0.0.1",
			"--webhook-port=" + c.env["MINITASK_WEBHOOK_PORT"],
			"--webhook-cert-path=" + c.env["MINITASK_WEBHOOK_CERT_DIR"],
			"--health-probe-bind-address=" + c.env["MINITASK_PROBE_ADDR"],
			"--metrics-bind-address=0",
		},
	}
	m.args = append(m.args, extraArgs...)
	t.Cleanup(func() {
		if m.running() {
			m.stop()
		}
		if t.Failed() {
			m.printLog()
		}
	})
	m.start()
	return m
}

// start starts the manager again (or the first time) and waits until its
// /readyz answers, that is until its webhooks serve.
func (m *manager) start() {
	m.t.Helper()
	m.starts++
	log, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		m.t.Fatal(err)
	}
	fmt.Fprintf(log, "=== e2e: manager start %d at %s\n", m.starts, time.Now().Format(time.RFC3339Nano))
	m.cmd = exec.Command(m.bin, m.args...)
	m.cmd.Stdout, m.cmd.Stderr = log, log
	// Should the test binary die before its cleanup, the manager dies with it.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		log.Close()
		m.t.Fatalf("starting the manager: %v", err)
	}
	m.exited = make(chan struct{})
	go func() {
		m.err = m.cmd.Wait()
		log.Close()
		close(m.exited)
	}()

	start := time.Now()
	url := "http://" + m.probeAddr() + "/readyz"
	probe := &http.Client{Timeout: time.Second}
	for {
		if resp, err := probe.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				m.t.Logf("manager ready (start %d, %.1fs)", m.starts, time.Since(start).Seconds())
				return
			}
		}
		select {
		case <-m.exited:
			m.t.Fatalf("the manager exited before it was ready: %v", m.err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(start) > 30*time.Second {
			m.t.Fatal("the manager was not ready after 30s")
		}
	}
}

// probeAddr is where the manager serves its probes: the last
// --health-probe-bind-address it was given.
func (m *manager) probeAddr() string {
	addr := m.c.env["MINITASK_PROBE_ADDR"]
	for _, arg := range m.args {
		if v, ok := strings.CutPrefix(arg, "--health-probe-bind-address="); ok {
			addr = v
		}
	}
	return addr
}

// stop stops the manager gracefully (SIGTERM), as Ctrl-C or a rolling
// update does, and fails the test unless it exits cleanly within 30s.
func (m *manager) stop() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		m.t.Fatalf("stopping the manager: %v", err)
	}
	select {
	case <-m.exited:
		if m.err != nil {
			m.t.Errorf("the manager did not exit cleanly on SIGTERM: %v", m.err)
		}
	case <-time.After(30 * time.Second):
		m.kill()
		m.t.Error("the manager had not exited 30s after SIGTERM; killed it")
	}
}

// kill kills the manager outright (SIGKILL): a crash, an OOM kill, a node lost.
func (m *manager) kill() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		m.t.Fatalf("killing the manager: %v", err)
	}
	<-m.exited
}

func (m *manager) running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// printLog writes the manager's log to the test log: the last 2000 lines,
// which hold what went wrong even after hundreds of runs.
func (m *manager) printLog() {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		m.t.Logf("reading the manager's log: %v", err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	const keep = 2000
	if len(lines) > keep {
		m.t.Logf("(the manager's log has %d lines; the first %d are left out)", len(lines), len(lines)-keep)
		lines = lines[len(lines)-keep:]
	}
	m.t.Logf("the log of manager %s:\n%s", m.bin, strings.Join(lines, "\n"))
}

// logSinceStart is what the manager has logged since its last start.
func (m *manager) logSinceStart() string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		m.t.Fatalf("reading the manager's log: %v", err)
	}
	log := string(b)
	return log[max(strings.LastIndex(log, "=== e2e: manager start"), 0):]
}
