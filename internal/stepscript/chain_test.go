package stepscript

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// chainStep is one step of a chained Pod as a test runs it.
type chainStep struct {
	script  string
	onError v1.OnError
	// timer, if it has a timeout, bounds the step (timer.go).
	timer Timer
}

// chainRun is what each step of a chain did, and the lines their scripts
// appended to $LOG, in the order written.
type chainRun struct {
	steps []wrapperRun
	log   []string
}

// chainCommands returns the processes of a chained Pod's steps, as their
// containers would run them: each its own wrapper, its own message, the
// Pod's gates in one directory (the Pod's /dev/shm), the results in another.
func chainCommands(t *testing.T, shell testShell, steps []chainStep) ([]*exec.Cmd, []string, string) {
	t.Helper()
	dir := t.TempDir()
	gates, resultsDir, log := filepath.Join(dir, "shm"), filepath.Join(dir, "results"), filepath.Join(dir, "log")
	for _, d := range []string{gates, resultsDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	protocol := Protocol{MessageLimit: runstate.MaxTerminationMessage}
	var cmds []*exec.Cmd
	var messages []string
	for i, step := range steps {
		messages = append(messages, filepath.Join(dir, fmt.Sprintf("message-%d", i+1)))
		command := ChainedCommand(step.script, step.onError, step.timer, protocol, i+1, len(steps))
		timed := step.timer.Timeout > 0
		wrapper, name := chainedWrapper, chainedWrapperName
		if timed {
			wrapper, name = timedChainedWrapper, timedChainedWrapperName
		}
		if command[2] != wrapper || command[3] != name {
			t.Fatalf("ChainedCommand does not run the chained wrapper: %q", command[:4])
		}
		command[0], command[2] = shell.sh, wrapperScript(shell.sh, resultsDir, messages[i], gates+"/step-", timed)
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + shell.path, "LOG=" + log, fmt.Sprintf("STEP=%d", i+1)}
		cmds = append(cmds, cmd)
	}
	return cmds, messages, log
}

// runChain runs a chained Pod's steps as processes, all at once as the
// kubelet starts the containers, the last first so that every step is seen
// waiting for its turn; and, for the steps of stop, sends SIGTERM once every
// step has started.
func runChain(t *testing.T, shell testShell, steps []chainStep, stop ...int) chainRun {
	t.Helper()
	cmds, messages, log := chainCommands(t, shell, steps)
	since := time.Now()
	outs := make([]*bytes.Buffer, len(cmds))
	for i := len(cmds) - 1; i >= 0; i-- {
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	if len(stop) > 0 {
		time.Sleep(300 * time.Millisecond)
		for _, i := range stop {
			if err := cmds[i-1].Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
	}
	var run chainRun
	for i, cmd := range cmds {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			ended := wrapperEnded(t, cmd, err, messages[i], outs[i].String(), "")
			ended.Message = withoutTimes(t, ended.Message, hasDate(shell.path), since)
			run.steps = append(run.steps, ended)
		case <-time.After(20 * time.Second):
			for _, c := range cmds {
				_ = c.Process.Kill()
			}
			t.Fatalf("step %d did not end within 20 s: the chain hangs (its output: %q)", i+1, outs[i].String())
		}
	}
	if b, err := os.ReadFile(log); err == nil {
		run.log = strings.Fields(string(b))
	}
	return run
}

// chainTimesPattern matches the times in a chained step's message.
var chainTimesPattern = regexp.MustCompile(`,"startedAt":([0-9]+),"finishedAt":([0-9]+)`)

// withoutTimes returns a chained step's message without its times, after
// checking them: a step that ran its script (its message has an exit code)
// says when, between since and now to the second, its start first. Where
// the shell's PATH has date it must (busybox's shell has its own date, on
// no PATH).
func withoutTimes(t *testing.T, message string, date bool, since time.Time) string {
	t.Helper()
	m := chainTimesPattern.FindStringSubmatch(message)
	switch {
	case !strings.HasPrefix(message, `{"exitCode":`):
	case date && m == nil:
		t.Errorf("the message %s has no times", message)
	case m != nil:
		started, _ := strconv.ParseInt(m[1], 10, 64)
		finished, _ := strconv.ParseInt(m[2], 10, 64)
		if started < since.Unix() || finished < started || finished > time.Now().Unix() {
			t.Errorf("the message %s says the step ran from %d to %d, not within %d to %d", message, started, finished, since.Unix(), time.Now().Unix())
		}
	}
	return chainTimesPattern.ReplaceAllString(message, "")
}

// hasDate says whether the PATH path has date on it.
func hasDate(path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, "date")); err == nil {
			return true
		}
	}
	return false
}

// TestChainedStepsRunOneAtATime runs chained steps as processes started all
// at once, in every test shell, and checks that they run in order, one at a
// time, that the first failing step stops the rest, which run nothing and
// say they were skipped, and that onError: continue lets the chain go on.
func TestChainedStepsRunOneAtATime(t *testing.T) {
	// Each step says when it starts and when it ends: overlapping steps
	// would interleave their lines.
	step := func(body string) chainStep {
		return chainStep{script: `echo "start-$STEP" >>"$LOG"; ` + body + `; code=$?; echo "end-$STEP" >>"$LOG"; exit $code`}
	}
	ok, slow := step("true"), step("sleep 0.2")
	failing := step("(exit 3)")
	continued := failing
	continued.onError = v1.OnErrorContinue
	skipped := wrapperRun{Message: `{"skipped":true}`}
	passed := wrapperRun{Message: `{"exitCode":0,"results":{}}`}
	tests := []struct {
		name  string
		steps []chainStep
		want  []wrapperRun
		log   string
	}{
		{name: "every step passes", steps: []chainStep{ok, slow, ok, slow, ok},
			want: []wrapperRun{passed, passed, passed, passed, passed},
			log:  "start-1 end-1 start-2 end-2 start-3 end-3 start-4 end-4 start-5 end-5"},
		{name: "the first failing step stops the rest", steps: []chainStep{ok, slow, failing, ok, slow},
			want: []wrapperRun{passed, passed, {ExitCode: 3, Message: `{"exitCode":3,"results":{}}`}, skipped, skipped},
			log:  "start-1 end-1 start-2 end-2 start-3 end-3"},
		{name: "the first step fails", steps: []chainStep{failing, ok},
			want: []wrapperRun{{ExitCode: 3, Message: `{"exitCode":3,"results":{}}`}, skipped},
			log:  "start-1 end-1"},
		{name: "onError continue goes on", steps: []chainStep{ok, continued, ok},
			want: []wrapperRun{passed, {Message: `{"exitCode":3,"results":{}}`}, passed},
			log:  "start-1 end-1 start-2 end-2 start-3 end-3"},
		{name: "the last step fails", steps: []chainStep{ok, failing},
			want: []wrapperRun{passed, {ExitCode: 3, Message: `{"exitCode":3,"results":{}}`}},
			log:  "start-1 end-1 start-2 end-2"},
	}
	for name, shell := range testShells(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				run := runChain(t, shell, tt.steps)
				if diff := cmp.Diff(tt.want, run.steps); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
				if got := strings.Join(run.log, " "); got != tt.log {
					t.Errorf("the steps ran as %q, want %q", got, tt.log)
				}
			})
		}
	}
}

// TestChainedStepStopsWhileWaiting sends SIGTERM, as the kubelet does when a
// run is cancelled or times out, to a step still waiting for its turn: it
// ends at once, 143, without running its script or writing a message; the
// running step before it gets the signal too and passes it to its script.
func TestChainedStepStopsWhileWaiting(t *testing.T) {
	for name, shell := range testShells(t) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			run := runChain(t, shell, []chainStep{
				{script: `trap 'echo "stopped-$STEP" >>"$LOG"; exit 7' TERM; echo "start-$STEP" >>"$LOG"; sleep 5 >/dev/null 2>&1 & wait`},
				{script: `echo "start-$STEP" >>"$LOG"`},
				{script: `echo "start-$STEP" >>"$LOG"`},
			}, 1, 2, 3)
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("the steps took %s to stop: a waiting step must end at its signal", took)
			}
			want := []wrapperRun{
				{ExitCode: 7, Message: `{"exitCode":7,"results":{}}`},
				{ExitCode: 143},
				{ExitCode: 143},
			}
			if diff := cmp.Diff(want, run.steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if got := strings.Join(run.log, " "); got != "start-1 stopped-1" {
				t.Errorf("the steps ran as %q, want only the first, stopped", got)
			}
		})
	}
}

// TestChainedStepStoppedHandsOverSkip signals only the running step, as the
// kubelet does first when it stops a Pod whose later steps' signals are
// still on their way: a step that was signalled hands over skip whatever it
// ends with, so that no later step starts its command in a run being
// stopped, even when the script's trap exits 0 or onError: continue lets
// its code pass.
func TestChainedStepStoppedHandsOverSkip(t *testing.T) {
	const running = `trap 'kill $!; echo "stopped-$STEP" >>"$LOG"; exit %d' TERM; echo "start-$STEP" >>"$LOG"; sleep 5 >/dev/null 2>&1 & wait`
	later := chainStep{script: `echo "start-$STEP" >>"$LOG"`}
	skipped := wrapperRun{Message: `{"skipped":true}`}
	tests := []struct {
		name string
		step chainStep
		want wrapperRun
	}{
		{name: "the trap exits 0", step: chainStep{script: fmt.Sprintf(running, 0)},
			want: wrapperRun{Message: `{"exitCode":0,"results":{}}`}},
		{name: "onError continue", step: chainStep{script: fmt.Sprintf(running, 9), onError: v1.OnErrorContinue},
			want: wrapperRun{Message: `{"exitCode":9,"results":{}}`}},
	}
	for name, shell := range testShells(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				run := runChain(t, shell, []chainStep{tt.step, later, later}, 1)
				if diff := cmp.Diff([]wrapperRun{tt.want, skipped, skipped}, run.steps); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
				if got := strings.Join(run.log, " "); got != "start-1 stopped-1" {
					t.Errorf("the steps ran as %q, want only the first, stopped", got)
				}
			})
		}
	}
}

// TestChainedStepsOfDifferentUsers runs chained steps as the users their
// images name (a Pod that sets none runs each container as its image's
// USER): each step must open the FIFO another user's step made. The gates'
// directory is made by the steps in a sticky, world-writable directory, as
// the Pod's /dev/shm is. It needs root, to run the steps as other users.
func TestChainedStepsOfDifferentUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running steps as other users needs root")
	}
	const nonroot = 65532
	tests := map[string][]uint32{
		"root hands over to nonroot, and back": {0, nonroot, 0},
		"nonroot hands over to root, and back": {nonroot, 0, nonroot},
	}
	for name, users := range tests {
		t.Run(name, func(t *testing.T) {
			base, err := os.MkdirTemp("", "chain-users-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			shm, resultsDir, log := filepath.Join(base, "shm"), filepath.Join(base, "results"), filepath.Join(base, "log")
			for dir, mode := range map[string]os.FileMode{base: 0o755, shm: 0o777 | os.ModeSticky, resultsDir: 0o777} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, mode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(log, nil, 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(log, 0o666); err != nil {
				t.Fatal(err)
			}
			protocol := Protocol{MessageLimit: runstate.MaxTerminationMessage}
			cmds := make([]*exec.Cmd, len(users))
			messages := make([]string, len(users))
			for i, uid := range users {
				messages[i] = filepath.Join(shm, fmt.Sprintf("message-%d", i+1))
				command := ChainedCommand(`echo "$(id -u)" >>"$LOG"`, "", Timer{}, protocol, i+1, len(users))
				command[2] = wrapperScript("/bin/sh", resultsDir, messages[i], filepath.Join(shm, "minitask-steps")+"/", false)
				cmds[i] = exec.Command("/bin/sh", command[1:]...)
				cmds[i].Dir = base
				cmds[i].Env = []string{"PATH=" + os.Getenv("PATH"), "LOG=" + log}
				cmds[i].SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
			}
			// The last first, so that each step waits for its turn.
			since := time.Now()
			for i := len(cmds) - 1; i >= 0; i-- {
				if err := cmds[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			var got []wrapperRun
			for i, cmd := range cmds {
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					ended := wrapperEnded(t, cmd, err, messages[i], "", "")
					ended.Message = withoutTimes(t, ended.Message, hasDate(os.Getenv("PATH")), since)
					got = append(got, ended)
				case <-time.After(20 * time.Second):
					for _, c := range cmds {
						_ = c.Process.Kill()
					}
					t.Fatalf("step %d (user %d) did not end within 20 s: the chain hangs", i+1, users[i])
				}
			}
			passed := wrapperRun{Message: `{"exitCode":0,"results":{}}`}
			if diff := cmp.Diff([]wrapperRun{passed, passed, passed}, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Fields(string(b)), []string{fmt.Sprint(users[0]), fmt.Sprint(users[1]), fmt.Sprint(users[2])}; !cmp.Equal(want, got) {
				t.Errorf("the steps ran as users %q, want %q, in order", got, want)
			}
		})
	}
}

// TestChainedStepStartedAgain starts a second container for a chained step
// whose first is running, as a kubelet that restarted may: the step's script
// runs once, and the second container ends as the first did, with its
// code and message, saying why it ran nothing.
func TestChainedStepStartedAgain(t *testing.T) {
	for name, shell := range testShells(t) {
		t.Run(name, func(t *testing.T) {
			steps := []chainStep{
				{script: `echo "start-$STEP" >>"$LOG"; sleep 0.3; exit 4`},
				{script: `echo "start-$STEP" >>"$LOG"`},
			}
			cmds, messages, log := chainCommands(t, shell, steps)
			again := exec.Command(cmds[0].Path, cmds[0].Args[1:]...)
			again.Dir, again.Env = cmds[0].Dir, cmds[0].Env
			var outs [3]bytes.Buffer
			for i, cmd := range []*exec.Cmd{cmds[0], again, cmds[1]} {
				cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
			}
			codes := make([]int, 3)
			for i, cmd := range []*exec.Cmd{cmds[0], again, cmds[1]} {
				if err := cmd.Wait(); err != nil {
					var exit *exec.ExitError
					if !errors.As(err, &exit) {
						t.Fatal(err)
					}
					codes[i] = exit.ExitCode()
				}
			}
			if diff := cmp.Diff([]int{4, 4, 0}, codes); diff != "" {
				t.Errorf("exit codes of the step, its second container and the next step (-want +got):\n%s", diff)
			}
			b, _ := os.ReadFile(log)
			if got := strings.Fields(string(b)); !cmp.Equal(got, []string{"start-1"}) {
				t.Errorf("the scripts ran as %q, want the first step's once, and the next step skipped", got)
			}
			said := outs[0].String() + outs[1].String()
			if !strings.Contains(said, "was started again") {
				t.Errorf("neither container of the step said it was started again: %q", said)
			}
			message, _ := os.ReadFile(messages[0])
			if got := withoutTimes(t, string(message), false, time.Time{}); got != `{"exitCode":4,"results":{}}` {
				t.Errorf("the step's message is %q, want its script's code", got)
			}
		})
	}
}
