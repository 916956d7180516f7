package stepscript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// wrapperRun is what one run of the wrapper did.
type wrapperRun struct {
	ExitCode int
	Stdout   string
	Stderr   string
	// Message is the termination message as written, "" if none was.
	Message string
}

// testShell is a shell and the tools the wrapper uses, as an image has them.
type testShell struct {
	// sh is the shell's path; path the PATH its commands are found on.
	sh, path string
}

// testShells returns the shells the wrapper is tested with: this machine's
// /bin/sh (dash on Debian) and its tools; bash as /bin/sh, as Fedora and
// RHEL images have it (in POSIX mode, as it runs under that name), when
// bash is installed; and busybox's, as Alpine and busybox images have them,
// when busybox is installed.
func testShells(t *testing.T) map[string]testShell {
	t.Helper()
	shells := map[string]testShell{}
	if _, err := os.Stat("/bin/sh"); err == nil {
		shells["sh"] = testShell{sh: "/bin/sh", path: os.Getenv("PATH")}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		dir := t.TempDir()
		if err := os.Symlink(bash, filepath.Join(dir, "sh")); err != nil {
			t.Fatal(err)
		}
		shells["bash"] = testShell{sh: filepath.Join(dir, "sh"), path: os.Getenv("PATH")}
	}
	if busybox, err := exec.LookPath("busybox"); err == nil {
		dir := t.TempDir()
		for _, applet := range []string{"sh", "awk", "od", "dd", "wc", "printf", "echo", "cat", "mkdir", "kill", "true", "false", "sleep"} {
			if err := os.Symlink(busybox, filepath.Join(dir, applet)); err != nil {
				t.Fatal(err)
			}
		}
		shells["busybox"] = testShell{sh: filepath.Join(dir, "sh"), path: dir}
	}
	if len(shells) == 0 {
		t.Skip("no shell on this machine")
	}
	return shells
}

// runWrapper runs a script step's command as the container would, with
// shell, its results in a directory of the test's own. files are written
// there first, as an earlier step would have.
func runWrapper(t *testing.T, shell testShell, script string, onError v1.OnError, results []string, files map[string][]byte, stdin string) wrapperRun {
	t.Helper()
	return runWrapperWithLimit(t, shell, script, onError, results, files, stdin, runstate.MaxTerminationMessage)
}

// runWrapperWithLimit is runWrapper for a step whose message may hold
// messageLimit bytes.
func runWrapperWithLimit(t *testing.T, shell testShell, script string, onError v1.OnError, results []string, files map[string][]byte, stdin string, messageLimit int) wrapperRun {
	t.Helper()
	cmd, messagePath := wrapperCommand(t, shell, script, onError, results, files, messageLimit)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return wrapperEnded(t, cmd, cmd.Run(), messagePath, stdout.String(), stderr.String())
}

// wrapperCommand returns the command of a script step as the container would
// run it, with shell, its results in a directory of the test's own, and the
// path its termination message is written to. files are written there
// first, as an earlier step would have.
func wrapperCommand(t *testing.T, shell testShell, script string, onError v1.OnError, results []string, files map[string][]byte, messageLimit int) (*exec.Cmd, string) {
	t.Helper()
	return timedWrapperCommand(t, shell, script, onError, Timer{}, results, files, messageLimit)
}

// timedWrapperCommand is wrapperCommand for a step bounded by timer (no
// bound when its timeout is 0).
func timedWrapperCommand(t *testing.T, shell testShell, script string, onError v1.OnError, timer Timer, results []string, files map[string][]byte, messageLimit int) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	resultsDir := filepath.Join(dir, "results")
	if err := os.Mkdir(resultsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, value := range files {
		if err := os.WriteFile(filepath.Join(resultsDir, name), value, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	messagePath := filepath.Join(dir, "termination-log")
	command := Command(script, onError, timer, Protocol{Results: results, MessageLimit: messageLimit})
	timed := timer.Timeout > 0
	if wrapper := map[bool]string{false: scriptWrapper, true: timedWrapper}[timed]; command[2] != wrapper {
		t.Fatalf("Command does not run the wrapper: %q", command)
	}
	command[0], command[2] = shell.sh, wrapperScript(shell.sh, resultsDir, messagePath, "", timed)
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + shell.path, "RESULTS=" + resultsDir}
	return cmd, messagePath
}

// wrapperEnded returns what the wrapper run by cmd did, which ended with err.
// A wrapper killed by a signal fails the test: a step's wrapper writes its
// message whatever becomes of its script.
func wrapperEnded(t *testing.T, cmd *exec.Cmd, err error, messagePath, stdout, stderr string) wrapperRun {
	t.Helper()
	run := wrapperRun{Stdout: stdout, Stderr: stderr}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() < 0:
		t.Fatalf("the wrapper was killed: %v (stdout %q, stderr %q)", err, stdout, stderr)
	case errors.As(err, &exit):
		run.ExitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("running the wrapper %s: %v", cmd.Path, err)
	}
	if message, err := os.ReadFile(messagePath); err == nil {
		run.Message = string(message)
	}
	return run
}

// TestScriptWrapperKeepsTheScriptsSemantics runs scripts through the wrapper
// and checks that each behaves as it did under /bin/sh -c alone, and that
// the message holds the script's code.
func TestScriptWrapperKeepsTheScriptsSemantics(t *testing.T) {
	tests := map[string]struct {
		script   string
		onError  v1.OnError
		stdin    string
		want     wrapperRun
		wantCode int32
		// codeIn is the code in a shell that has another of its own,
		// instead of want.ExitCode and wantCode.
		codeIn map[string]int32
	}{
		"success": {
			script: "echo out; echo err >&2",
			want:   wrapperRun{Stdout: "out\n", Stderr: "err\n"},
		},
		"its own exit code": {
			script:   "echo before; exit 3",
			want:     wrapperRun{ExitCode: 3, Stdout: "before\n"},
			wantCode: 3,
		},
		"the last command's code": {
			script:   "false",
			want:     wrapperRun{ExitCode: 1},
			wantCode: 1,
		},
		"set -e stops at the first failure": {
			script:   "set -e\necho one\nfalse\necho two",
			want:     wrapperRun{ExitCode: 1, Stdout: "one\n"},
			wantCode: 1,
		},
		"without set -e it goes on": {
			script: "echo one\nfalse\necho two",
			want:   wrapperRun{Stdout: "one\ntwo\n"},
		},
		"set -e in a subshell": {
			script:   "set -eu\n( exit 7 )\necho never",
			want:     wrapperRun{ExitCode: 7},
			wantCode: 7,
		},
		"unset variable under set -u": {
			script:   "set -u\necho \"$NOPE\"\necho never",
			want:     wrapperRun{ExitCode: 2, Stderr: "NOPE"},
			wantCode: 2,
			codeIn:   map[string]int32{"bash": 127},
		},
		"sh's own $0 and no positional params, as under /bin/sh -c": {
			script: `echo "$0 $#"`,
			want:   wrapperRun{Stdout: "SHELL 0\n"},
		},
		"the wrapper's variables do not leak": {
			script: `echo "[${code-}${mode-}${sep-}${name-}${file-}]"`,
			want:   wrapperRun{Stdout: "[]\n"},
		},
		"stdin reaches the script": {
			script: `read -r line; echo "got $line"`,
			stdin:  "hello\n",
			want:   wrapperRun{Stdout: "got hello\n"},
		},
		"traps run in the script's shell": {
			script:   "trap 'echo bye' EXIT\nexit 4",
			want:     wrapperRun{ExitCode: 4, Stdout: "bye\n"},
			wantCode: 4,
		},
		"exec replaces the script, not the wrapper": {
			script:   "exec sh -c 'exit 5'",
			want:     wrapperRun{ExitCode: 5},
			wantCode: 5,
		},
		"killed by a signal: 128 and its number": {
			// The shell's notice of it ("Killed") is left out: dash gives
			// it for a background job only now and then, and bash never.
			script:   "kill -9 $$",
			want:     wrapperRun{ExitCode: 137, Stderr: "*"},
			wantCode: 137,
		},
		"a script that is no valid shell": {
			script:   "if then fi (",
			want:     wrapperRun{ExitCode: 2, Stderr: "sh"},
			wantCode: 2,
		},
		"quotes and dollars in the script stay the script's": {
			script: `x='a"b'\''c $(d)'; printf '%s\n' "$x"`,
			want:   wrapperRun{Stdout: "a\"b'c $(d)\n"},
		},
		"onError continue exits 0 with the code in the message": {
			script:   "echo tried; exit 3",
			onError:  v1.OnErrorContinue,
			want:     wrapperRun{Stdout: "tried\n"},
			wantCode: 3,
		},
		"onError continue and success": {
			script:  "true",
			onError: v1.OnErrorContinue,
		},
		"stopAndFail said out loud": {
			script:   "exit 9",
			onError:  v1.OnErrorStopAndFail,
			want:     wrapperRun{ExitCode: 9},
			wantCode: 9,
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				got := runWrapper(t, shell, tc.script, tc.onError, nil, nil, tc.stdin)
				got.Stdout = strings.ReplaceAll(got.Stdout, shell.sh, "SHELL")
				message, err := runstate.ParseTerminationMessage(got.Message)
				if err != nil {
					t.Fatalf("message %q: %v", got.Message, err)
				}
				want, wantCode := tc.want, tc.wantCode
				if code, ok := tc.codeIn[shellName]; ok {
					want.ExitCode, wantCode = int(code), code
				}
				if *message.ExitCode != wantCode || len(message.Results) != 0 {
					t.Errorf("message = %q, want exit code %d and no results", got.Message, wantCode)
				}
				// A shell's error messages differ between shells: only their
				// gist is compared ("*": whatever it says, if anything).
				if want.Stderr == "*" || (want.Stderr != "" && strings.Contains(got.Stderr, want.Stderr)) {
					got.Stderr = want.Stderr
				}
				got.Message = ""
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("wrapper run (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestScriptWrapperWritesResults checks which files reach the message, and
// that the script's own writes to $(results.NAME.path) do.
func TestScriptWrapperWritesResults(t *testing.T) {
	tests := map[string]struct {
		script  string
		results []string
		files   map[string][]byte
		want    map[string]string
	}{
		"no results declared": {script: "true"},
		"declared but not written": {
			script:  "true",
			results: []string{"digest"},
		},
		"written by the script": {
			script:  `printf %s sha256:abc > "$RESULTS/digest"; echo 1.2 > "$RESULTS/version"`,
			results: []string{"digest", "version"},
			want:    map[string]string{"digest": "sha256:abc", "version": "1.2\n"},
		},
		"written by an earlier step": {
			script:  "true",
			results: []string{"digest"},
			files:   map[string][]byte{"digest": []byte("from before")},
			want:    map[string]string{"digest": "from before"},
		},
		"empty file": {
			script:  `: > "$RESULTS/empty"`,
			results: []string{"empty"},
			want:    map[string]string{"empty": ""},
		},
		"undeclared files are left out": {
			script:  `echo x > "$RESULTS/other"; echo y > "$RESULTS/a\"b"`,
			results: []string{"digest"},
			files:   map[string][]byte{"digest": []byte("d")},
			want:    map[string]string{"digest": "d"},
		},
		"a directory is no result": {
			script:  `mkdir "$RESULTS/dir"`,
			results: []string{"dir"},
		},
		"a script that fails still hands back its results": {
			script:  `echo partial > "$RESULTS/log"; exit 1`,
			results: []string{"log"},
			want:    map[string]string{"log": "partial\n"},
		},
		"names with every byte a name may hold": {
			script:  `echo v > "$RESULTS/_a-Z_9"`,
			results: []string{"_a-Z_9"},
			want:    map[string]string{"_a-Z_9": "v\n"},
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				got := runWrapper(t, shell, tc.script, "", tc.results, tc.files, "")
				message, err := runstate.ParseTerminationMessage(got.Message)
				if err != nil {
					t.Fatalf("message %q: %v", got.Message, err)
				}
				if diff := cmp.Diff(tc.want, message.Results, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("results (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestScriptWrapperEscapesHostileValues writes values no JSON string may
// hold as they are, and values that would break out of a careless wrapper,
// and checks that each comes back exactly, as Go reads it: ill-formed UTF-8
// byte by byte as U+FFFD.
func TestScriptWrapperEscapesHostileValues(t *testing.T) {
	values := map[string][]byte{
		"quote":          []byte(`say "hi"`),
		"backslash":      []byte(`C:\path\to\n`),
		"json":           []byte(`","x":"injected"}}`),
		"newlines":       []byte("a\nb\r\nc\n\n"),
		"tabs":           []byte("\ta\tb\v\f\b"),
		"nul":            []byte("a\x00b"),
		"controls":       controlBytes(),
		"del":            []byte("\x7f"),
		"shell":          []byte("$(touch /tmp/owned) `id` ${HOME} '; exit 9; '"),
		"printf":         []byte("%s %d %n %% \\n"),
		"utf8":           []byte("grüß ✓ 日本 𝄞 \u2028\u2029 \ufeff"),
		"latin1":         []byte("caf\xe9"),
		"lone cont":      []byte("\x80\xbf"),
		"overlong":       []byte("\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf"),
		"surrogate":      []byte("\xed\xa0\x80\xed\xbf\xbf"),
		"past max":       []byte("\xf4\x90\x80\x80\xf5\x80\x80\x80\xff\xfe"),
		"cut short":      []byte("ok\xe2\x9c"),
		"cut then ascii": []byte("\xf0\x9d\x84x"),
		"every byte":     everyByte(),
		"limit":          bytes.Repeat([]byte("x"), runstate.MaxTerminationMessage),
	}
	rng := rand.New(rand.NewPCG(15, 1))
	for i := range 20 {
		random := make([]byte, rng.IntN(300))
		for j := range random {
			random[j] = byte(rng.UintN(256))
		}
		values["random"+string(rune('a'+i))] = random
	}
	var names []string
	files := map[string][]byte{}
	for name, value := range values {
		key := strings.ReplaceAll(name, " ", "_")
		names = append(names, key)
		files[key] = value
	}
	for shellName, shell := range testShells(t) {
		t.Run(shellName, func(t *testing.T) {
			// A limit that all of them fit in: what is tested here is the escaping.
			got := runWrapperWithLimit(t, shell, "true", "", names, files, "", 1<<30)
			if !json.Valid([]byte(got.Message)) || !utf8.ValidString(got.Message) {
				t.Fatalf("the message is not valid JSON in UTF-8: %q", got.Message)
			}
			message, err := runstate.ParseTerminationMessage(got.Message)
			if err != nil {
				t.Fatalf("message %q: %v", got.Message, err)
			}
			want := map[string]string{}
			for name, value := range files {
				want[name] = decodeBytewise(value)
			}
			if diff := cmp.Diff(want, message.Results); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if got.Stdout != "" || got.Stderr != "" {
				t.Errorf("the wrapper wrote output of its own: stdout %q, stderr %q", got.Stdout, got.Stderr)
			}
		})
	}
}

// TestScriptWrapperSaysResultsAreTooLarge: results that would pass the
// step's limit are replaced by a message that says by how much, which the
// kubelet keeps whole; a message of exactly the limit is written as it is.
func TestScriptWrapperSaysResultsAreTooLarge(t *testing.T) {
	empty := len(`{"exitCode":0,"results":{"v":""}}`)
	tests := map[string]struct {
		value    []byte
		limit    int
		onError  v1.OnError
		script   string
		wantCode int
		want     string
	}{
		"exactly the limit": {
			value: bytes.Repeat([]byte("x"), 4096-empty), limit: 4096,
			want: `{"exitCode":0,"results":{"v":"` + strings.Repeat("x", 4096-empty) + `"}}`,
		},
		"one byte over": {
			value: bytes.Repeat([]byte("x"), 4097-empty), limit: 4096,
			want: `{"exitCode":0,"results":{},"resultsTooLarge":{"size":4097,"limit":4096,"cut":false}}`,
		},
		"escapes count": {
			value: bytes.Repeat([]byte("\n"), 1100), limit: 2048,
			want: `{"exitCode":0,"results":{},"resultsTooLarge":{"size":2233,"limit":2048,"cut":false}}`,
		},
		"a file longer than is read: the size is at least": {
			value: bytes.Repeat([]byte("y"), 10<<20), limit: 4096,
			want: fmt.Sprintf(`{"exitCode":0,"results":{},"resultsTooLarge":{"size":%d,"limit":4096,"cut":true}}`, empty+MaxResultRead),
		},
		"the script's code is kept, and onError too": {
			value: bytes.Repeat([]byte("x"), 5000), limit: 4096, script: "exit 3", onError: v1.OnErrorContinue,
			want: fmt.Sprintf(`{"exitCode":3,"results":{},"resultsTooLarge":{"size":%d,"limit":4096,"cut":true}}`, empty+MaxResultRead),
		},
	}
	for shellName, shell := range testShells(t) {
		for name, tc := range tests {
			t.Run(shellName+"/"+name, func(t *testing.T) {
				script := tc.script
				if script == "" {
					script = "true"
				}
				got := runWrapperWithLimit(t, shell, script, tc.onError, []string{"v"}, map[string][]byte{"v": tc.value}, "", tc.limit)
				if got.Message != tc.want {
					t.Errorf("message of %d bytes\n got %.200q\nwant %.200q", len(got.Message), got.Message, tc.want)
				}
				if got.ExitCode != tc.wantCode {
					t.Errorf("exit code %d, want %d", got.ExitCode, tc.wantCode)
				}
				message, err := runstate.ParseTerminationMessage(got.Message)
				if err != nil {
					t.Fatalf("message: %v", err)
				}
				if tooLarge := message.ResultsTooLarge; (tooLarge != nil) != strings.Contains(tc.want, "resultsTooLarge") {
					t.Errorf("parsed resultsTooLarge = %+v", tooLarge)
				}
			})
		}
	}
}

// decodeBytewise is what Go's JSON decoder reads from the wrapper's text for
// value: well-formed UTF-8 as it is, each byte of anything else as U+FFFD.
func decodeBytewise(value []byte) string {
	var b strings.Builder
	for len(value) > 0 {
		r, size := utf8.DecodeRune(value)
		b.WriteRune(r) // utf8.RuneError for an ill-formed byte, as the wrapper writes
		value = value[size:]
	}
	return b.String()
}

func controlBytes() []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func everyByte() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}
