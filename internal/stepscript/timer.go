package stepscript

import (
	"strconv"
	"time"
)

// This file bounds a script step by its timeout (API.md, "Step timeout"):
// the wrapper of a step with one starts a timer beside the script. The
// wrapper of a step without one is the text it was before steps had
// timeouts, word for word.
//
// A timed step's command is
//
//	/bin/sh -c WRAPPER minitask-timed-step SCRIPT ONERROR LIMIT TIMEOUT GRACE RESULT...
//	/bin/sh -c WRAPPER minitask-timed-chained-step SCRIPT ONERROR LIMIT AFTER SELF TIMEOUT GRACE RESULT...
//
// TIMEOUT and GRACE are whole seconds. Their own $0 tells a reader of the
// Pod (kwok's stages) that two more arguments come before the results, so
// that the untimed wrappers' arguments, which the Pods of earlier releases
// carry, keep their places.

const (
	// timedWrapperName and timedChainedWrapperName are the $0 of a timed
	// step's wrapper, as wrapperName and chainedWrapperName are of an
	// untimed one's.
	timedWrapperName        = "minitask-timed-step"
	timedChainedWrapperName = "minitask-timed-chained-step"
)

// Timer bounds a script step: Timeout after its script starts, the script
// gets SIGTERM (its trap runs), and Grace after that SIGKILL. A Timeout of
// 0 is no bound but the run's.
type Timer struct {
	Timeout, Grace time.Duration
}

// args returns the timer's arguments, in whole seconds rounded up: a step
// is never stopped before its timeout.
func (t Timer) args() []string {
	return []string{seconds(t.Timeout), seconds(t.Grace)}
}

func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((max(d, 0)+time.Second-1)/time.Second), 10)
}

// timerTraps reads a timed wrapper's timeout and grace (the arguments
// after onError and the limit, and for a chained step after the step it
// waits for and its own number: positions %d and %d). A step that timed
// out is not marked stopped: under onError: continue a chained step hands
// the next step its turn.
const timerTraps = `timeout=$%d
grace=$%d
timer=
expired=
`

// timerExpired is the timer's exit code once the timeout has passed: the
// wrapper reads it, not a signal, to know that the step timed out. The
// timer signals the script alone: a signal from the timer to the wrapper
// ($$, PID 1 of the container) was lost on a real kubelet with busybox's
// shell, where one from the script got through.
const timerExpired = "9"

// timerStart starts the timer once the script runs, counting from its
// start: a background job that sleeps the timeout, sends the script's
// shell SIGTERM (its trap runs), sleeps the grace period, then kills it,
// and exits timerExpired from the timeout on. The script's other processes end with the container,
// whose PID 1 the wrapper is. The timer holds none of the container's
// output, so that nothing waits for it, and when told to stop (SIGUSR2,
// timerStop) it kills the sleep at hand, even one it has just started,
// before it could note its PID (stop), and ends: no sleep outlives the
// step. It is stopped by a signal the wrapper does not trap, which a
// subshell has at its default (to end it) until it traps it: busybox's
// shell may lose a signal its parent traps that comes while the subshell
// drops the parent's traps. It kills its sleep with SIGKILL: busybox's
// shell may run a background applet in a fork that still has the trap it
// inherited, which would catch any other signal. A shell without sleep gets no timer: the step is bounded by its
// run's timeout alone.
const timerStart = `{
	s=
	stop=
	trap 'stop=1; [ -z "$s" ] || kill -KILL "$s" 2>/dev/null' USR2
	nap() { sleep "$1" & s=$!; [ -z "$stop" ] || kill -KILL "$s" 2>/dev/null; wait "$s" && [ -z "$stop" ]; }
	nap "$timeout" || exit 0
	kill -TERM "$pid" 2>/dev/null
	nap "$grace" || exit ` + timerExpired + `
	kill -KILL "$pid" 2>/dev/null
	exit ` + timerExpired + `
} </dev/null >/dev/null 2>&1 &
timer=$!
`

// timerStop, once the script has ended, stops the timer (timerStart) and
// reads from its exit code whether the timeout passed. A shell that reaps a
// job a signal ended says so (dash: "User defined signal 2"), on the
// step's output but for the redirection.
const timerStop = `if [ -n "$timer" ]; then
	kill -USR2 "$timer" 2>/dev/null
	wait "$timer" >/dev/null 2>&1
	[ "$?" -ne ` + timerExpired + ` ] || expired=1
fi
`

// timerMessage puts "timedOut":true and the timeout in the message of a
// step that timed out (in timedout, as JSON, or empty).
const timerMessage = `timedout=
[ -z "$expired" ] || timedout=",\"timedOut\":true,\"timeoutSeconds\":$timeout"
`

// timerVerdict makes a step that timed out fail, whatever its script's
// code, unless onError is continue: a script whose trap exits 0 exits 143
// (128+SIGTERM), as if the signal had ended it, so that no later step
// runs. The message keeps the script's own code.
const timerVerdict = `[ -z "$expired" ] || [ "$code" -ne 0 ] || code=143
`
