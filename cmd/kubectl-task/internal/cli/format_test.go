package cli

import (
	"testing"
	"time"
)

func TestFlagDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour:                   "1h",
		10 * time.Minute:            "10m",
		90 * time.Minute:            "1h30m",
		90 * time.Second:            "1m30s",
		10 * time.Second:            "10s",
		2*time.Hour + 5*time.Second: "2h0m5s",
		0:                           "0s",
	} {
		if got := flagDuration(d); got != want {
			t.Errorf("flagDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
