//go:build e2e && e2enode

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// follower is a kubectl task logs -f running in the background.
type follower struct {
	name   string
	cancel context.CancelFunc
	// lines gets each line it prints; closed once it has exited, after
	// err is set.
	lines  chan string
	err    error
	stderr strings.Builder
}

// follow starts kubectl task logs -f on the run named name.
func follow(t *testing.T, c *cluster, name string) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	f := &follower{name: name, cancel: cancel, lines: make(chan string, 1000)}
	cmd := exec.CommandContext(ctx, filepath.Join(c.repo, "bin/kubectl-task"), "logs", "-f", name, "-n", ns)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+c.env["KUBECONFIG"])
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &f.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		f.err = cmd.Wait()
		close(f.lines)
	}()
	t.Cleanup(func() {
		cancel()
		for range f.lines {
		}
	})
	return f
}

// waitLines waits until it has printed n lines, and returns them.
func (f *follower) waitLines(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(time.Minute)
	for len(got) < n {
		select {
		case l, ok := <-f.lines:
			if !ok {
				t.Fatalf("kubectl task logs -f %s exited (%v) after printing %q\n%s", f.name, f.err, got, f.stderr.String())
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("kubectl task logs -f %s printed %q in a minute, want %d lines", f.name, got, n)
		}
	}
	return got
}

// rest waits until it has exited (failing the test if it has not within two
// minutes, or if it failed) and returns what it printed since waitLines.
func (f *follower) rest(t *testing.T) []string {
	t.Helper()
	var got []string
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-f.lines:
			if !ok {
				if f.err != nil {
					t.Errorf("kubectl task logs -f %s: %v\n%s", f.name, f.err, f.stderr.String())
				}
				return got
			}
			got = append(got, l)
		case <-timeout:
			f.cancel()
			t.Errorf("kubectl task logs -f %s had not ended 2 minutes after its run did; it printed %q", f.name, got)
			return got
		}
	}
}

// checkFollowedTicks fails the test unless lines, what kubectl task logs -f
// printed of a ticking step whose node was lost, are its ticks from the
// first, each once and in order, then a line saying that the log is gone
// with the node.
func checkFollowedTicks(t *testing.T, lines []string) {
	t.Helper()
	t.Logf("kubectl task logs -f printed %d lines, the last %q", len(lines), lines[max(0, len(lines)-1):])
	ticks := lines
	gone := fmt.Sprintf(`[work] (log gone: Pod "lost-pod" is on node %q, and the node is not ready (`, realNodeName)
	if len(ticks) > 0 && strings.HasPrefix(ticks[len(ticks)-1], gone) {
		ticks = ticks[:len(ticks)-1]
	} else {
		t.Errorf("kubectl task logs -f printed %q, want it to end with a line that starts %q", lines, gone)
	}
	if len(ticks) < 2 {
		t.Errorf("kubectl task logs -f printed %q, want the ticks before the node was lost", lines)
	}
	for i, l := range ticks {
		if want := fmt.Sprintf("[work] tick %d", i+1); l != want {
			t.Errorf("kubectl task logs -f printed %q as line %d, want %q: %q", l, i+1, want, lines)
			break
		}
	}
}
