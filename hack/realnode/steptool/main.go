// Command steptool is the one program of the real node's shell-less image
// (minitask.local/noshell, built by hack/realnode/images): a step in an image
// with no /bin/sh runs it with command and args, and the node's sandbox image
// runs it as its pause process. Each verb does one thing a test checks from
// outside: what it printed, the file it left, the code it exited with.
//
//	steptool echo WORD...          print the words, one line
//	steptool write FILE TEXT       write TEXT and a newline to FILE
//	steptool cat FILE...           print the files
//	steptool sleep SECONDS         sleep, printing a line when SIGTERM comes
//	steptool exit CODE             exit with CODE
//	steptool alloc MIB             touch MIB MiB of memory, then sleep an hour
//	steptool pause                 wait for SIGTERM or SIGINT (the sandbox)
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: steptool echo|write|cat|sleep|exit|alloc|pause ARG...")
	}
	verb, args := os.Args[1], os.Args[2:]
	switch verb {
	case "echo":
		fmt.Println(join(args))
	case "write":
		need(args, 2)
		if err := os.WriteFile(args[0], []byte(args[1]+"\n"), 0o644); err != nil {
			fail(err.Error())
		}
	case "cat":
		for _, f := range args {
			b, err := os.ReadFile(f)
			if err != nil {
				fail(err.Error())
			}
			os.Stdout.Write(b)
		}
	case "sleep":
		need(args, 1)
		sleep(number(args[0]))
	case "exit":
		need(args, 1)
		os.Exit(number(args[0]))
	case "alloc":
		need(args, 1)
		alloc(number(args[0]))
	case "pause":
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
	default:
		fail("steptool: unknown verb " + strconv.Quote(verb))
	}
}

// sleep waits seconds, or until SIGTERM, which it reports on stdout so that a
// test can tell the signal reached the step, then exits 143 as a shell would.
func sleep(seconds int) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	select {
	case <-time.After(time.Duration(seconds) * time.Second):
	case <-term:
		fmt.Println("steptool: SIGTERM")
		os.Exit(143)
	}
}

// alloc touches every page of mib MiB, one MiB at a time, printing its
// progress, so that a memory limit below it kills the step.
func alloc(mib int) {
	held := make([][]byte, 0, mib)
	for i := 0; i < mib; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
		if (i+1)%64 == 0 {
			fmt.Printf("steptool: %d MiB\n", i+1)
		}
	}
	fmt.Printf("steptool: holding %d MiB\n", len(held))
	time.Sleep(time.Hour)
}

func join(words []string) string { return strings.Join(words, " ") }

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail("steptool: not a number: " + strconv.Quote(s))
	}
	return n
}

func need(args []string, n int) {
	if len(args) < n {
		fail(fmt.Sprintf("steptool: %d arguments needed, %d given", n, len(args)))
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}
