package stepscript

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// timedRun is what one run of a timed wrapper did, and how long it took.
type timedRun struct {
	wrapperRun
	took time.Duration
}

// runTimed runs script through the timed wrapper with shell, bounded by
// timer; with stopAfterReady, it sends the wrapper SIGTERM (as the kubelet
// does when the run is cancelled) once the script has printed "ready". It
// fails the test if anything the wrapper started outlives it by a second:
// the timer, its sleep, or a script it left running.
func runTimed(t *testing.T, shell testShell, script string, onError v1.OnError, timer Timer, stopAfterReady bool) timedRun {
	t.Helper()
	cmd, messagePath := timedWrapperCommand(t, shell, script, onError, timer, []string{"state"}, nil, runstate.MaxTerminationMessage)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the wrapper: %v", err)
	}
	type ended struct {
		stdout string
		err    error
	}
	done := make(chan ended, 1)
	go func() {
		stdout := bufio.NewReader(stdoutPipe)
		var out strings.Builder
		if stopAfterReady {
			ready, _ := stdout.ReadString('\n')
			out.WriteString(ready)
			if ready == "ready\n" {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		rest, _ := io.ReadAll(stdout)
		out.Write(rest)
		done <- ended{stdout: out.String(), err: cmd.Wait()}
	}()
	var got ended
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		got = <-done
		t.Fatalf("the wrapper did not end, and close its output, within 20 s (%v); stdout %q, stderr %q", got.err, got.stdout, stderr.String())
	}
	took := time.Since(start)
	run := wrapperEnded(t, cmd, got.err, messagePath, got.stdout, stderr.String())
	// The wrapper's process group holds whatever it started.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		left := liveInGroup(t, cmd.Process.Pid)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("a process the wrapper started outlived it by a second (stdout %q): %q", got.stdout, left)
		}
	}
	return timedRun{wrapperRun: run, took: took}
}

// TestTimedWrapperStopsTheScriptAtItsTimeout runs scripts through the timed
// wrapper in every test shell: past the timeout the script gets SIGTERM and
// its trap runs, then SIGKILL once the grace period is over; the message
// says the step timed out, with the script's own code; the wrapper fails
// the step unless onError is continue; a script that ends first ends the
// step at once, and the timer with it; a step stopped by the kubelet
// before its timeout is no timeout.
func TestTimedWrapperStopsTheScriptAtItsTimeout(t *testing.T) {
	const timedOut = `,"timedOut":true,"timeoutSeconds":1`
	tests := map[string]struct {
		script  string
		onError v1.OnError
		timer   Timer
		stop    bool
		want    wrapperRun
		// within bounds how long the run may take, at least; and at most.
		atLeast, atMost time.Duration
	}{
		"past the timeout, the script's trap runs on SIGTERM": {
			script:  "trap 'kill $!; echo trapped; exit 3' TERM\nsleep 30 >/dev/null 2>&1 &\nwait $!",
			timer:   Timer{Timeout: time.Second, Grace: 30 * time.Second},
			want:    wrapperRun{ExitCode: 3, Stdout: "trapped\n", Message: `{"exitCode":3` + timedOut + `,"results":{}}`},
			atLeast: time.Second, atMost: 10 * time.Second,
		},
		"a trap that ignores SIGTERM: SIGKILL after the grace period": {
			script: "trap 'echo ignored' TERM\nwhile :; do sleep 0.1; done",
			timer:  Timer{Timeout: time.Second, Grace: time.Second},
			// The shells say "Killed" of it, or nothing.
			want:    wrapperRun{ExitCode: 137, Stdout: "ignored\n", Stderr: "*", Message: `{"exitCode":137` + timedOut + `,"results":{}}`},
			atLeast: 2 * time.Second, atMost: 10 * time.Second,
		},
		"no trap: the script dies of SIGTERM": {
			script:  "exec sleep 30",
			timer:   Timer{Timeout: time.Second, Grace: 30 * time.Second},
			want:    wrapperRun{ExitCode: 143, Stderr: "*", Message: `{"exitCode":143` + timedOut + `,"results":{}}`},
			atLeast: time.Second, atMost: 10 * time.Second,
		},
		"a trap that exits 0 still fails the step: 143, the message keeping 0": {
			script:  "trap 'kill $!; exit 0' TERM\nsleep 30 >/dev/null 2>&1 &\nwait $!",
			timer:   Timer{Timeout: time.Second, Grace: 30 * time.Second},
			want:    wrapperRun{ExitCode: 143, Message: `{"exitCode":0` + timedOut + `,"results":{}}`},
			atLeast: time.Second, atMost: 10 * time.Second,
		},
		"onError continue: the step exits 0, the message says it timed out": {
			script:  "trap 'kill $!; exit 6' TERM\nsleep 30 >/dev/null 2>&1 &\nwait $!",
			onError: v1.OnErrorContinue,
			timer:   Timer{Timeout: time.Second, Grace: 30 * time.Second},
			want:    wrapperRun{Message: `{"exitCode":6` + timedOut + `,"results":{}}`},
			atLeast: time.Second, atMost: 10 * time.Second,
		},
		"what the trap writes reaches the results": {
			script:  "trap 'kill $!; printf late > \"$RESULTS/state\"; exit 4' TERM\nsleep 30 >/dev/null 2>&1 &\nwait $!",
			timer:   Timer{Timeout: time.Second, Grace: 30 * time.Second},
			want:    wrapperRun{ExitCode: 4, Message: `{"exitCode":4` + timedOut + `,"results":{"state":"late"}}`},
			atLeast: time.Second, atMost: 10 * time.Second,
		},
		"a script that ends first ends the step at once, and its timer": {
			script: "echo done",
			timer:  Timer{Timeout: 30 * time.Second, Grace: 30 * time.Second},
			want:   wrapperRun{Stdout: "done\n", Message: `{"exitCode":0,"results":{}}`},
			atMost: 5 * time.Second,
		},
		"a script that fails first keeps its code": {
			script: "sleep 0.3; exit 2",
			timer:  Timer{Timeout: 30 * time.Second, Grace: 30 * time.Second},
			want:   wrapperRun{ExitCode: 2, Message: `{"exitCode":2,"results":{}}`},
			atMost: 5 * time.Second,
		},
		"stopped by the kubelet before its timeout: no timeout": {
			// A loop of short foreground commands: a child the trap
			// killed just after it was forked might live on, and this
			// test holds the timer alone to ending with the step.
			script: "trap 'echo stopped; exit 5' TERM\necho ready\nwhile :; do sleep 0.1; done",
			timer:  Timer{Timeout: 30 * time.Second, Grace: 30 * time.Second},
			stop:   true,
			want:   wrapperRun{ExitCode: 5, Stdout: "ready\nstopped\n", Message: `{"exitCode":5,"results":{}}`},
			atMost: 10 * time.Second,
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				t.Parallel()
				got := runTimed(t, shell, tc.script, tc.onError, tc.timer, tc.stop)
				if got.took < tc.atLeast || got.took > tc.atMost {
					t.Errorf("the step took %v, want %v to %v", got.took, tc.atLeast, tc.atMost)
				}
				if _, err := runstate.ParseTerminationMessage(got.Message); err != nil {
					t.Errorf("message %q: %v", got.Message, err)
				}
				if tc.want.Stderr == "*" {
					got.Stderr = "*"
				}
				if diff := cmp.Diff(tc.want, got.wrapperRun); diff != "" {
					t.Errorf("wrapper run (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestTimedChainedSteps runs chained steps whose first step times out: under
// stopAndFail the rest are skipped, under onError: continue the next step
// runs.
func TestTimedChainedSteps(t *testing.T) {
	timer := Timer{Timeout: time.Second, Grace: 30 * time.Second}
	slow := "trap 'kill $!; echo trapped >>\"$LOG\"; exit 3' TERM\nsleep 30 >/dev/null 2>&1 &\nwait $!"
	next := chainStep{script: `echo "ran-$STEP" >>"$LOG"`}
	timedOut := `{"exitCode":3,"timedOut":true,"timeoutSeconds":1,"results":{}}`
	tests := map[string]struct {
		steps []chainStep
		want  []wrapperRun
		log   string
	}{
		"stopAndFail: the steps after it are skipped": {
			steps: []chainStep{{script: slow, timer: timer}, next},
			want:  []wrapperRun{{ExitCode: 3, Message: timedOut}, {Message: `{"skipped":true}`}},
			log:   "trapped",
		},
		"continue: the next step runs": {
			steps: []chainStep{{script: slow, timer: timer, onError: v1.OnErrorContinue}, next},
			want:  []wrapperRun{{Message: timedOut}, {Message: `{"exitCode":0,"results":{}}`}},
			log:   "trapped ran-2",
		},
		"a step that ends first hands over": {
			steps: []chainStep{{script: `echo "ran-$STEP" >>"$LOG"`, timer: timer}, next},
			want:  []wrapperRun{{Message: `{"exitCode":0,"results":{}}`}, {Message: `{"exitCode":0,"results":{}}`}},
			log:   "ran-1 ran-2",
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				t.Parallel()
				run := runChain(t, shell, tc.steps)
				if diff := cmp.Diff(tc.want, run.steps); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
				if got := strings.Join(run.log, " "); got != tc.log {
					t.Errorf("the steps ran as %q, want %q", got, tc.log)
				}
			})
		}
	}
}

// TestTimedChainedCommand pins a timed chained step's arguments: kwok's
// stages read its results after the timer's two.
func TestTimedChainedCommand(t *testing.T) {
	got := ChainedCommand("make", "", Timer{Timeout: time.Minute, Grace: 30 * time.Second}, Protocol{Results: []string{"digest"}, MessageLimit: 4096}, 2, 3)
	if got[2] != timedChainedWrapper {
		t.Errorf("the third argument is not the timed chained wrapper: %.80q", got[2])
	}
	got[2] = "WRAPPER"
	want := []string{"/bin/sh", "-c", "WRAPPER", "minitask-timed-chained-step", "make", "stopAndFail", "4096", "1", "2", "60", "30", "digest"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
}

// liveInGroup returns the command of each process of process group pgid
// that has not ended: a dead one that no one reaped (this machine's PID 1
// may not) is gone as far as a step is concerned.
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "cmdline"))
		live = append(live, string(b[:i+1])+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return live
}
