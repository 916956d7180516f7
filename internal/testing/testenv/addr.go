package testenv

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address (127.0.0.1:PORT) whose port was free a
// moment ago, for a server that a test starts and that cannot listen on
// port 0 and report its own.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
