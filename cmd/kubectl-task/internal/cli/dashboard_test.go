package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/cli"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

func TestDashboardFlags(t *testing.T) {
	h := newHarness(t)
	tests := map[string]struct {
		args       []string
		wantStderr string
	}{
		"a port past 65535": {[]string{"dashboard", "--port", "70000"},
			"error: --port 70000 is not a port: give one from 1 to 65535, or 0 for a free one; see 'kubectl task dashboard --help'\n"},
		"-n and -A": {[]string{"dashboard", "-A"},
			"error: give -n NAMESPACE or -A, not both; see 'kubectl task dashboard --help'\n"},
		"an argument": {[]string{"dashboard", "x"},
			"error: kubectl task dashboard takes no arguments; see 'kubectl task dashboard --help'\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.kubectlTask(t, tc.args...)
			if got.Code != cli.ExitUsage || got.Stderr != tc.wantStderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", got.Code, got.Stderr, cli.ExitUsage, tc.wantStderr)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer that a test may read while the plugin writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var dashboardURL = regexp.MustCompile(`: (http://127\.0\.0\.1:[0-9]+/)\n`)

// TestDashboardServesUntilInterrupted runs kubectl task dashboard: it prints
// its URL, serves the runs there, warns when it listens beyond loopback, and
// stops, exiting 0, on Ctrl-C.
func TestDashboardServesUntilInterrupted(t *testing.T) {
	h := newHarness(t)
	for name, tc := range map[string]struct {
		args     []string
		wantWarn bool
	}{
		"on loopback":         {args: nil},
		"on every address":    {args: []string{"--address", "0.0.0.0"}, wantWarn: true},
		"read-only, fixed -n": {args: []string{"--read-only"}},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut syncBuffer
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			code := make(chan int, 1)
			go func() {
				args := append([]string{"dashboard", "--kubeconfig", h.Env.Kubeconfig, "-n", h.NS}, tc.args...)
				code <- cli.Execute(ctx, args, cli.Options{Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}})
			}()
			var url string
			testenv.Eventually(t, func() (bool, string) {
				m := dashboardURL.FindStringSubmatch(out.String())
				if m != nil {
					url = m[1]
				}
				return m != nil, out.String() + errOut.String()
			}, "the dashboard to print its URL")
			res, err := http.Get(url + "runs")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "Namespace "+h.NS) {
				t.Errorf("GET /runs: %s\n%s", res.Status, page)
			}
			if warned := strings.Contains(errOut.String(), "warning: the dashboard listens on"); warned != tc.wantWarn {
				t.Errorf("warned %v, want %v: %q", warned, tc.wantWarn, errOut.String())
			}
			interrupt()
			select {
			case c := <-code:
				if c != cli.ExitOK || !strings.HasSuffix(out.String(), "Press Ctrl-C to stop it.\nDashboard stopped.\n") {
					t.Errorf("exit %d, stdout %q", c, out.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the dashboard did not stop within 10 s of Ctrl-C")
			}
		})
	}
}
