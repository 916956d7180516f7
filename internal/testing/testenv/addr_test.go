package testenv

import (
	"net"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePortRange(t *testing.T) {
	type want struct {
		Lo, Hi int
		Err    bool
	}
	tests := map[string]struct {
		in   string
		want want
	}{
		"linux default":  {in: "32768\t60999\n", want: want{Lo: 32768, Hi: 60999}},
		"spaces":         {in: "1024 65000", want: want{Lo: 1024, Hi: 65000}},
		"one field":      {in: "32768\n", want: want{Err: true}},
		"not a number":   {in: "low high", want: want{Err: true}},
		"reversed":       {in: "60999 32768", want: want{Err: true}},
		"above the last": {in: "32768 70000", want: want{Err: true}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			lo, hi, err := parsePortRange(tt.in)
			if diff := cmp.Diff(tt.want, want{Lo: lo, Hi: hi, Err: err != nil}); diff != "" {
				t.Errorf("parsePortRange(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestPortOutside(t *testing.T) {
	type bounds struct{ Least, Most int }
	tests := map[string]struct {
		lo, hi int
		want   bounds
	}{
		"linux default: below the range":      {lo: 32768, hi: 60999, want: bounds{10000, 32767}},
		"range from lowestPort: above it":     {lo: 10000, hi: 60999, want: bounds{61000, 65535}},
		"range from 1024: above it":           {lo: 1024, hi: 40000, want: bounds{40001, 65535}},
		"range of all ports: any from lowest": {lo: 1024, hi: 65535, want: bounds{10000, 65535}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			least := portOutside(tt.lo, tt.hi, func(int) int { return 0 })
			most := portOutside(tt.lo, tt.hi, func(n int) int { return n - 1 })
			if diff := cmp.Diff(tt.want, bounds{least, most}); diff != "" {
				t.Errorf("portOutside(%d, %d)'s least and most (-want +got):\n%s", tt.lo, tt.hi, diff)
			}
		})
	}
}

// TestFreeAddr checks that FreeAddr's port is outside this machine's
// ephemeral range and that a server can listen on it.
func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := ephemeralPorts(); port >= lo && port <= hi {
		t.Errorf("FreeAddr() = %s, in the ephemeral range %d-%d", addr, lo, hi)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on FreeAddr()'s %s: %v", addr, err)
	}
	_ = l.Close()
}
