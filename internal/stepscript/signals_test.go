package stepscript

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// TestScriptWrapperPassesSignalsOn stops a step as the kubelet does when its
// run is cancelled or times out: it signals the container's PID 1, the
// wrapper. The script's own trap must run, and the wrapper must still write
// the message, with the code the script ended with, and exit with it.
func TestScriptWrapperPassesSignalsOn(t *testing.T) {
	tests := map[string]struct {
		// script prints "ready" once its trap is set (and $! with it),
		// then waits to be stopped. A child it waits for is killed by the
		// trap, and holds no output of the wrapper's: busybox's shell may
		// run a background applet in a fork that has not yet dropped the
		// trap it inherited, which catches the kill, and it then lives on.
		script  string
		signal  syscall.Signal
		onError v1.OnError
		want    wrapperRun
		// wantCode is the message's exit code; wantResults its results.
		wantCode    int32
		wantResults map[string]string
	}{
		"SIGTERM: the script's trap runs, and its code is the step's": {
			script:   "trap 'kill $!; echo cleaning up; exit 3' TERM\nsleep 10 >/dev/null 2>&1 &\necho ready\nwait $!",
			signal:   syscall.SIGTERM,
			want:     wrapperRun{ExitCode: 3, Stdout: "ready\ncleaning up\n"},
			wantCode: 3,
		},
		"SIGTERM in a loop of foreground commands: the trap runs after the one at hand": {
			script:   "trap 'echo stopped; exit 0' TERM\necho ready\nwhile :; do sleep 0.1; done",
			signal:   syscall.SIGTERM,
			want:     wrapperRun{Stdout: "ready\nstopped\n"},
			wantCode: 0,
		},
		"SIGTERM without a trap: the script dies of it, 128+15": {
			script: "echo ready\nexec sleep 60",
			signal: syscall.SIGTERM,
			// busybox's shell says "Terminated" of it, the others nothing.
			want:     wrapperRun{ExitCode: 143, Stdout: "ready\n", Stderr: "*"},
			wantCode: 143,
		},
		"SIGHUP too": {
			script:   "trap 'kill $!; exit 4' HUP\nsleep 10 >/dev/null 2>&1 &\necho ready\nwait $!",
			signal:   syscall.SIGHUP,
			want:     wrapperRun{ExitCode: 4, Stdout: "ready\n"},
			wantCode: 4,
		},
		"what the trap writes reaches the results": {
			script:      "trap 'kill $!; printf stopped > \"$RESULTS/state\"; exit 5' TERM\nsleep 10 >/dev/null 2>&1 &\necho ready\nwait $!",
			signal:      syscall.SIGTERM,
			want:        wrapperRun{ExitCode: 5, Stdout: "ready\n"},
			wantCode:    5,
			wantResults: map[string]string{"state": "stopped"},
		},
		"onError continue: the code in the message, the wrapper exits 0": {
			script:   "trap 'kill $!; exit 6' TERM\nsleep 10 >/dev/null 2>&1 &\necho ready\nwait $!",
			signal:   syscall.SIGTERM,
			onError:  v1.OnErrorContinue,
			want:     wrapperRun{Stdout: "ready\n"},
			wantCode: 6,
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				t.Parallel()
				got := stopWrapper(t, shell, tc.script, tc.onError, tc.signal)
				message, err := runstate.ParseTerminationMessage(got.Message)
				if err != nil {
					t.Fatalf("message %q: %v", got.Message, err)
				}
				if *message.ExitCode != tc.wantCode {
					t.Errorf("message %q, want exit code %d", got.Message, tc.wantCode)
				}
				if diff := cmp.Diff(tc.wantResults, message.Results); len(tc.wantResults) > 0 && diff != "" {
					t.Errorf("results (-want +got):\n%s", diff)
				}
				got.Message = ""
				if tc.want.Stderr == "*" {
					got.Stderr = "*"
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("wrapper run (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// stopWrapper runs script through the wrapper with shell, the Task
// declaring the result state, waits for the script to say "ready", sends the
// wrapper signal, and returns what it did. A wrapper that has not ended, and
// closed its output, within 10 seconds is killed with everything it started
// (a wrapper that the signal killed leaves its script running), and fails
// the test.
func stopWrapper(t *testing.T, shell testShell, script string, onError v1.OnError, signal syscall.Signal) wrapperRun {
	t.Helper()
	cmd, messagePath := wrapperCommand(t, shell, script, onError, []string{"state"}, nil, runstate.MaxTerminationMessage)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the wrapper: %v", err)
	}
	type ended struct {
		stdout string
		err    error
		// failure, if not empty, says why the wrapper was not stopped.
		failure string
	}
	done := make(chan ended, 1)
	go func() {
		stdout := bufio.NewReader(stdoutPipe)
		ready, err := stdout.ReadString('\n')
		if ready != "ready\n" {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			rest, _ := io.ReadAll(stdout)
			done <- ended{stdout: ready + string(rest), err: cmd.Wait(), failure: fmt.Sprintf("the script said %q before it was stopped (%v)", ready, err)}
			return
		}
		if err := cmd.Process.Signal(signal); err != nil {
			done <- ended{failure: fmt.Sprintf("signalling the wrapper: %v", err)}
			return
		}
		rest, _ := io.ReadAll(stdout)
		done <- ended{stdout: ready + string(rest), err: cmd.Wait()}
	}()
	var got ended
	select {
	case got = <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		got = <-done
		got.failure = fmt.Sprintf("the wrapper did not end within 10s of %v (%v)", signal, got.err)
	}
	if got.failure != "" {
		t.Fatalf("%s; stdout %q, stderr %q", got.failure, got.stdout, stderr.String())
	}
	return wrapperEnded(t, cmd, got.err, messagePath, got.stdout, stderr.String())
}
