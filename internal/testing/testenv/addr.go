package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeAddr is a loopback address (127.0.0.1:PORT) whose port was free a
// moment ago, for a server that a test starts and that cannot listen on
// port 0 and report its own.
//
// PORT lies outside the kernel's ephemeral port range, so no outgoing
// connection (of this process, the API server or etcd) is given it between
// FreeAddr's check and the server's bind: the kernel picks the local ports
// of outgoing connections, and of listens on port 0, from that range only.
// Another process that chooses ports as FreeAddr does (another test binary
// running in parallel, say) can still take it, so a caller whose server
// fails with "address already in use" may start it again with a new address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo, hi := ephemeralPorts()
	const attempts = 100
	for range attempts {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(portOutside(lo, hi, rand.IntN)))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // in use by a server of someone else's
		}
		_ = l.Close()
		return addr
	}
	t.Fatalf("no free loopback port outside the ephemeral range %d-%d after %d attempts", lo, hi, attempts)
	return ""
}

// The lowest port FreeAddr picks: below it are the privileged ports and
// the well-known ports of services that may run on a developer's machine.
const lowestPort = 10000

// Linux's default ephemeral port range, for when /proc does not say.
const defaultEphemeralLow, defaultEphemeralHigh = 32768, 60999

// ephemeralPorts is the kernel's ephemeral port range, from which it picks
// the local ports of outgoing connections.
func ephemeralPorts() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	lo, hi, err = parsePortRange(string(b))
	if err != nil {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	return lo, hi
}

// parsePortRange parses ip_local_port_range's "LOW<tab>HIGH\n".
func parsePortRange(s string) (lo, hi int, err error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("port range %q: want two fields", s)
	}
	if lo, err = strconv.Atoi(f[0]); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if hi, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("port range %q: not a range of ports", s)
	}
	return lo, hi, nil
}

// portOutside picks a port in [lowestPort, 65535] outside the ephemeral
// range [lo, hi], with intN(n) a random number in [0, n). It prefers the
// ports below the range, as they are many under the default one, and
// picks above it only when there are none below. A range that covers them
// all leaves no choice but a port in it.
func portOutside(lo, hi int, intN func(int) int) int {
	if below := lo - lowestPort; below > 0 {
		return lowestPort + intN(below)
	}
	if above := 65535 - hi; above > 0 {
		return hi + 1 + intN(above)
	}
	return lowestPort + intN(65536-lowestPort)
}
