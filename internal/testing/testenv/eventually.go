package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitTimeout bounds every wait for a controller or the API server in tests:
// generous for a shared two-core machine, and only ever spent when a test
// fails.
const WaitTimeout = 30 * time.Second

// Eventually polls check until it reports true, and fails the test with
// check's last explanation if WaitTimeout passes first. format and args say
// what was awaited.
func Eventually(t testing.TB, check func() (ok bool, explanation string), format string, args ...any) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, WaitTimeout, true,
		func(context.Context) (bool, error) {
			var ok bool
			ok, last = check()
			return ok, nil
		})
	if err != nil {
		t.Fatalf("waiting for "+format+": %v\n%s", append(args, err, last)...)
	}
}
