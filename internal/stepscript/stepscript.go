// Package stepscript is the command a script step's container runs: the
// script, inside a wrapper that ends by writing the step's termination
// message, {"exitCode": N, "results": {"NAME": "VALUE", ...}}
// (docs/results.md). The run's Pod (internal/runpod) takes every script
// step's command from here, and so does anyone who must write the very Pod
// the controller writes (the benchmarks' floor).
//
// The container runs
//
//	/bin/sh -c WRAPPER minitask-step SCRIPT ONERROR LIMIT RESULT...
//
// (a step with a timeout runs a timed wrapper, with two more arguments:
// timer.go). WRAPPER is the constant text below; the script and the result names are
// its arguments, never pasted into it, so no script can break out of it.
// The wrapper runs the script as the step always ran it, /bin/sh -c SCRIPT,
// with the container's stdin, stdout and stderr, so that $0, set -e, traps
// and the exit code are the script's own; then it writes the message, and
// exits with the script's code (0 under onError: continue).
//
// The script runs as the wrapper's child, not in its foreground, so that the
// wrapper can pass it the signals that stop a step (see wrapperScript): the
// wrapper is the container's PID 1, which the kubelet signals when the run
// is cancelled or times out.
// Result names are declared names (the CRD allows only [a-zA-Z0-9_-]), so
// they need no escaping; values are escaped byte by byte by od and awk,
// which busybox, Alpine and Debian images all have.
package stepscript

import (
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

const (
	// wrapperName is the wrapper's $0: it names the wrapper in the
	// shell's own error messages, and tells a reader of the Pod (kwok's
	// stages, say) where the script is: the argument after it.
	wrapperName = "minitask-step"
	// chainedWrapperName is a chained step's wrapper's $0, which tells
	// kwok's stages that two more arguments follow onError's and the
	// limit's: the step it waits for and its own number.
	chainedWrapperName = "minitask-chained-step"

	// MaxResultRead is how much of a result's file the wrapper reads: a value
	// longer than the kubelet keeps of a whole message is too large however
	// it ends, and reading the rest of a file of gigabytes would only burn
	// the step's time and memory. The controller names it when it reports
	// results too large to read whole.
	MaxResultRead = runstate.MaxTerminationMessage + 1
)

// jsonStringAWK turns the decimal bytes that od prints into one JSON string,
// quotes included: printable ASCII as it is but " and \, control bytes
// escaped, well-formed UTF-8 sequences as they are, and each byte of an
// ill-formed one (overlong, a surrogate, past U+10FFFF, cut short) as
// \ufffd, as Go's decoder reads it. It is run with LC_ALL=C so that every
// awk prints a byte, not a character, for %c.
const jsonStringAWK = `BEGIN {
	n = 0
	for (i = 0; i < 32; i++) esc[i] = sprintf("\\u%04x", i)
	esc[8] = "\\b"; esc[9] = "\\t"; esc[10] = "\\n"; esc[12] = "\\f"; esc[13] = "\\r"
	esc[34] = "\\\""; esc[92] = "\\\\"; esc[127] = "\\u007f"
	printf "\""
}
{ for (i = 1; i <= NF; i++) b[n++] = $i + 0 }
END {
	i = 0
	while (i < n) {
		c = b[i]
		if (c < 128) {
			if (c in esc) printf "%s", esc[c]; else printf "%c", c
			i++
			continue
		}
		len = 0; lo = 128; hi = 191
		if (c >= 194 && c <= 223) len = 2
		else if (c >= 224 && c <= 239) { len = 3; if (c == 224) lo = 160; if (c == 237) hi = 159 }
		else if (c >= 240 && c <= 244) { len = 4; if (c == 240) lo = 144; if (c == 244) hi = 143 }
		ok = len > 0 && i + len <= n
		for (j = 1; ok && j < len; j++) {
			d = b[i + j]
			if (j == 1 && (d < lo || d > hi)) ok = 0
			if (j > 1 && (d < 128 || d > 191)) ok = 0
		}
		if (ok) { for (j = 0; j < len; j++) printf "%c", b[i + j]; i += len }
		else { printf "\\ufffd"; i++ }
	}
	printf "\""
}`

// scriptWrapper is the wrapper of every script step of a Pod whose steps
// are init containers; chainedWrapper, of every step of a chained Pod.
var (
	scriptWrapper  = wrapperScript(scriptShell, runstate.ResultsDir, runstate.TerminationMessagePath, "", false)
	chainedWrapper = wrapperScript(scriptShell, runstate.ResultsDir, runstate.TerminationMessagePath, GatePrefix, false)
	// timedWrapper and timedChainedWrapper are their counterparts for a
	// step with a timeout (timer.go).
	timedWrapper        = wrapperScript(scriptShell, runstate.ResultsDir, runstate.TerminationMessagePath, "", true)
	timedChainedWrapper = wrapperScript(scriptShell, runstate.ResultsDir, runstate.TerminationMessagePath, GatePrefix, true)
)

// scriptShell runs every script: /bin/sh -c SCRIPT.
const scriptShell = "/bin/sh"

// GatePrefix starts the paths through which the steps of a chained Pod hand
// over to each other: GatePrefix+N.done, .turn and .fifo for step N (from
// 1), in a directory of the Pod's /dev/shm that the steps make (see
// chainPrologue). /dev/shm is the Pod's own: its containers share the Pod's IPC
// namespace, and with it the sandbox's /dev/shm, in containerd and CRI-O
// alike, so that the hand-over needs no volume (a volume costs a Pod's
// start the kubelet's 300 ms wait for its mounts).
const GatePrefix = "/dev/shm/minitask-steps/"

// wrapperScript returns the wrapper's text for scripts run by shell, results
// in resultsDir and the termination message at messagePath; tests run it
// with shells and directories of their own. With gates, the wrapper of a
// chained step: it first waits for its turn, and hands over when done.
//
// Its arguments are the script, the step's onError, the most bytes the
// kubelet keeps of the step's message, for a chained step the number of
// the step it waits for and its own (each empty for none), and the Task's
// result names. A message with results that would pass that limit is
// replaced by one that says so, with its size: the kubelet would cut it
// without a word, and the controller could then only tell that it was cut,
// never by how much.
//
// SIGTERM and SIGHUP are passed on to the script's shell, so that a trap of
// its own runs within the Pod's grace period. The kubelet stops a container
// by signalling its PID 1, the wrapper: a shell there ignores a signal it
// has no trap for (the kernel delivers none to a namespace's init by
// default), and a trap of the wrapper's would wait for a command it runs in
// its foreground to end. So the script runs in the background, and the
// wrapper waits for it:
//
//   - A background job of a non-interactive shell reads /dev/null: the
//     script gets the container's stdin through fd 3, opened around the
//     job alone (a brace group's redirection, not exec's, which would end
//     the wrapper if stdin were closed).
//   - A trapped signal ends wait early with 128+N, then runs the trap, which
//     passes the signal on and says so (caught): the wrapper waits again
//     while the script lives, so that the code is the script's own. A
//     script that ended as the signal came may have been reaped (bash does
//     so at once): wait then gives its code, or 127 if the interrupted wait
//     had it already.
//   - A signal before the script's PID is known is passed on once it is.
//
// SIGINT and SIGQUIT are not passed on: a background job of a shell without
// job control ignores them (POSIX), and a shell cannot trap a signal that
// was ignored when it started.
//
// A chained step's turn (chainPrologue) comes when the step before has
// written its verdict (N.turn: ok, or skip once a step failed) and then
// N.done. The waiting step holds N.fifo open for reading and writing, which
// never blocks, and sleeps in read until a line comes; the step before, once
// N.done is there, writes a line through its own read-write open, which
// never blocks either. Whichever comes first, the waiter finds N.done or
// gets the line: no polling, and no step ever waits for the next one. The
// wait runs in the background, so that a signal (the Pod stopped while the
// step waits) ends the step at once. A step whose turn says skip runs
// nothing, writes {"skipped":true} as its message, hands skip on and exits
// 0: only the step that failed fails. A step that was signalled (its run
// cancelled or timed out) hands skip on too, whatever its code.
//
// A timed wrapper (timed) also bounds the script by its timeout (timer.go).
func wrapperScript(shell, resultsDir, messagePath, gates string, timed bool) string {
	header, prologue, shift, epilogue := scriptHeader, "", 3, `[ "$mode" = %[6]s ] && exit 0
exit "$code"
`
	// times, timesFormat and timesArg put the chained step's times in its
	// message (chainTimes); the other wrapper's text stays as it was.
	times, timesFormat, timesArg := "", "", ""
	if gates != "" {
		header, prologue, shift, epilogue = chainHeader, chainPrologue, 5, chainEpilogue
		times, timesFormat, timesArg = chainTimes, "%s", ` "$times"`
	}
	// A timed wrapper's text is the untimed one's with timerTraps,
	// timerStart, timerStop and timerVerdict added (see timer.go): a step
	// without a timeout runs the very text it ran before steps had one.
	traps, start, stop := "", "", ""
	if timed {
		timeout := shift + 1
		traps = fmt.Sprintf(timerTraps, timeout, timeout+1)
		start, stop = timerStart, timerStop
		times += timerMessage
		timesFormat += "%s"
		timesArg += ` "$timedout"`
		epilogue = timerVerdict + epilogue
		shift += 2
	}
	return fmt.Sprintf(header+`trap 'forward TERM' TERM
trap 'forward HUP' HUP
`+traps+prologue+`{ %[1]s -c "$1" <&3 3<&- & } 3<&0
pid=$!
[ -z "$caught" ] || kill -"$caught" "$pid" 2>/dev/null
`+start+`while :; do
	caught=
	wait "$pid"
	code=$?
	[ -n "$caught" ] || break
	kill -0 "$pid" 2>/dev/null && continue
	wait "$pid" 2>/dev/null
	last=$?
	[ "$last" -eq 127 ] || code=$last
	break
done
`+stop+`%[9]smode=$2
limit=$3
shift %[8]d
dir=%[2]s
if [ $# -eq 0 ]; then
	printf '{"exitCode":%%d%[10]s,"results":{}}' "$code"%[11]s >%[5]s
else
	msg=$(
		printf '{"exitCode":%%d%[10]s,"results":{' "$code"%[11]s
		sep=
		for name in "$@"; do
			[ -f "$dir/$name" ] || continue
			printf '%%s"%%s":' "$sep" "$name"
			dd if="$dir/$name" bs=%[3]d count=1 2>/dev/null | od -An -v -tu1 | LC_ALL=C awk '%[4]s'
			sep=,
		done
		printf '}}'
	)
	size=$(printf '%%s' "$msg" | wc -c)
	if [ "$((size))" -le "$limit" ]; then
		printf '%%s' "$msg"
	else
		cut=false
		for name in "$@"; do
			if [ -f "$dir/$name" ] && [ "$(($(wc -c <"$dir/$name")))" -gt %[3]d ]; then cut=true; fi
		done
		printf '{"exitCode":%%d%[10]s,"results":{},"resultsTooLarge":{"size":%%d,"limit":%%d,"cut":%%s}}' "$code"%[11]s "$((size))" "$limit" "$cut"
	fi >%[5]s
fi
`+epilogue, shellQuote(shell), shellQuote(resultsDir), MaxResultRead, jsonStringAWK, shellQuote(messagePath), v1.OnErrorContinue, shellQuote(gates), shift,
		times, timesFormat, timesArg)
}

// scriptHeader starts the wrapper: forward passes a signal on to the
// script, once it runs.
const scriptHeader = `pid=
caught=
forward() { caught=$1; [ -z "$pid" ] || kill -"$1" "$pid" 2>/dev/null; }
`

// chainHeader is scriptHeader for a chained step, whose forward also
// remembers, in stopped, that the step was signalled: the kubelet signals
// every container of a Pod it stops at once, and a script that ends well
// on its signal (a trap's exit 0, or any code under onError: continue)
// must not hand the next step a turn that would start its command in a
// run that is being stopped (chainEpilogue).
const chainHeader = `pid=
caught=
stopped=
forward() { caught=$1; stopped=$1; [ -z "$pid" ] || kill -"$1" "$pid" 2>/dev/null; }
`

// chainPrologue waits for a chained step's turn (see wrapperScript). A
// shell without mkfifo (no image with a shell is known to lack it) polls
// for N.done instead.
//
// The steps of a Pod may run as different users (each image's own USER,
// where the Pod sets none), and a step must open the FIFO that another
// created: gate makes the gates' directory writable by every user, at once
// (umask 0, not a chmod after), and each FIFO readable and writable by
// every user. The directory is the Pod's own, not /dev/shm itself, which is
// sticky: there the kernel (fs.protected_fifos, which systemd sets to 1)
// refuses any open that may create of a FIFO its opener does not own, and
// a step's read-write open (<>) is one.
//
// Once its turn has come, a step claims it (N.claim, made by mkdir, which
// either makes it or fails): restartPolicy Never means at least once, not
// once, for a kubelet that dies right after starting a container may make
// it again when it comes back (kubernetes/kubernetes#83705), and a chained
// Pod has every step's container made at its start. A container that finds
// its step claimed runs nothing: it says so on stderr, waits for the step's
// first container to end (N.exit), and ends as it did, with its message and
// code. Where mkdir is missing, no step is claimed and each runs as before.
const chainPrologue = `gates=%[7]s
after=$4
self=$5
gate() {
	[ -d "${gates%%/*}" ] || (umask 0; mkdir "${gates%%/*}") 2>/dev/null
	mkfifo -m 666 "$gates$1.fifo" 2>/dev/null
}
handover() {
	[ -n "$self" ] || return 0
	gate "$self"
	echo "$1" >"$gates$self.turn"
	: >"$gates$self.done"
	[ -p "$gates$self.fifo" ] && echo go 1<>"$gates$self.fifo"
	return 0
}
if [ -n "$after" ]; then
	gate "$after"
	if [ -p "$gates$after.fifo" ]; then
		{ [ -e "$gates$after.done" ] || read -r _ <&3; } 3<>"$gates$after.fifo" &
	else
		{ until [ -e "$gates$after.done" ]; do sleep 0.05 2>/dev/null || sleep 1 2>/dev/null || :; done; } &
	fi
	pid=$!
	wait "$pid"
	pid=
	if [ -n "$caught" ]; then
		[ "$caught" = TERM ] && exit 143
		exit 129
	fi
	turn=
	read -r turn <"$gates$after.turn" 2>/dev/null
	if [ "$turn" != ok ]; then
		printf '{"skipped":true}' >%[5]s
		handover skip
		exit 0
	fi
fi
me=${self:-$((${after:-0} + 1))}
claimed=
[ -d "${gates%%/*}" ] || (umask 0; mkdir "${gates%%/*}") 2>/dev/null
if mkdir "$gates$me.claim" 2>/dev/null; then
	claimed=1
elif [ -d "$gates$me.claim" ]; then
	echo "minitask: this step's container was started again (by a kubelet that restarted); its command ran once, in the container before, and is not run again" >&2
	until [ -e "$gates$me.exit" ]; do sleep 1 2>/dev/null || :; done
	cat "$gates$me.message" >%[5]s 2>/dev/null
	read -r final <"$gates$me.exit"
	exit "${final:-1}"
fi
started=$(date +%%s 2>/dev/null)
`

// chainTimes, after a chained step's script has ended, makes its start and
// end, in seconds since the epoch, the message's "startedAt" and
// "finishedAt" (in times, as JSON, or empty where date is missing). The
// controller reads them as the step's times: its container's are not the
// command's, as the kubelet records a container's start only after its
// process runs (a short step can even end before), and a step's container
// ends after it has handed over, when the next step's command may already
// run. Each is read on the step's side of the hand-over, so that to the
// second a step's times bound its command, and never overlap the next's.
const chainTimes = `ended=$(date +%s 2>/dev/null)
times=
case "$started$ended" in
*[!0-9]*) ;;
*) [ -n "$started" ] && [ -n "$ended" ] && times=",\"startedAt\":$started,\"finishedAt\":$ended" ;;
esac
`

// chainEpilogue records, for a container of the same step started again,
// the step's message and code (see chainPrologue), then hands the turn on and
// exits: ok if the step
// passed (or failed under onError: continue), skip if it failed or was
// signalled (chainHeader).
const chainEpilogue = `final=$code
[ "$mode" = %[6]s ] && final=0
if [ -n "$claimed" ]; then
	cat %[5]s >"$gates$me.message" 2>/dev/null
	echo "$final" >"$gates$me.exit"
fi
if [ -z "$stopped" ] && { [ "$mode" = %[6]s ] || [ "$code" -eq 0 ]; }; then handover ok; else handover skip; fi
exit "$final"
`

// Protocol is what the wrapper of every script step of a Pod is told: the
// Task's result names, and the most bytes of a step's message the kubelet
// keeps in a Pod of that many steps.
type Protocol struct {
	// Results are the Task's result names, in its order.
	Results []string
	// MessageLimit is the most bytes of one step's termination message
	// that the kubelet keeps (runstate.TerminationMessageLimit).
	MessageLimit int
}

// ProtocolFor returns the protocol of task's Pod. The kubelet shares its
// termination messages' bytes among all of the Pod's containers, its
// sidecars' too.
func ProtocolFor(task *v1.Task) Protocol {
	return Protocol{
		Results:      runstate.ResultNames(task),
		MessageLimit: runstate.TerminationMessageLimit(len(task.Spec.Steps) + len(task.Spec.Sidecars)),
	}
}

// Command returns the command of a script step whose references are
// already replaced: the wrapper, then the script, the step's onError
// (stopAndFail when empty), the message's limit, the timer's timeout and
// grace when it has a timeout (timer.go), and the names of the Task's
// results.
func Command(script string, onError v1.OnError, timer Timer, protocol Protocol) []string {
	if onError == "" {
		onError = v1.OnErrorStopAndFail
	}
	wrapper, name, timerArgs := scriptWrapper, wrapperName, []string(nil)
	if timer.Timeout > 0 {
		wrapper, name, timerArgs = timedWrapper, timedWrapperName, timer.args()
	}
	command := make([]string, 0, 9+len(protocol.Results))
	command = append(command, scriptShell, "-c", wrapper, name, script, string(onError), strconv.Itoa(protocol.MessageLimit))
	command = append(command, timerArgs...)
	return append(command, protocol.Results...)
}

// ChainedCommand returns Command's counterpart for step (from 1) of a
// chained Pod of steps steps: the chained wrapper, named chainedWrapperName,
// then the script, onError, the message's limit, the step it waits for and
// its own number (each empty for none: the first waits for no step, the last
// hands over to none), the timer's timeout and grace when it has a timeout,
// and the Task's result names.
func ChainedCommand(script string, onError v1.OnError, timer Timer, protocol Protocol, step, steps int) []string {
	if onError == "" {
		onError = v1.OnErrorStopAndFail
	}
	after, self := "", ""
	if step > 1 {
		after = strconv.Itoa(step - 1)
	}
	if step < steps {
		self = strconv.Itoa(step)
	}
	wrapper, name, timerArgs := chainedWrapper, chainedWrapperName, []string(nil)
	if timer.Timeout > 0 {
		wrapper, name, timerArgs = timedChainedWrapper, timedChainedWrapperName, timer.args()
	}
	command := make([]string, 0, 11+len(protocol.Results))
	command = append(command, scriptShell, "-c", wrapper, name, script, string(onError), strconv.Itoa(protocol.MessageLimit), after, self)
	command = append(command, timerArgs...)
	return append(command, protocol.Results...)
}

// shellQuote quotes s for the shell: a path of the controller's own, never
// a user's text, which only ever travels as an argument.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
