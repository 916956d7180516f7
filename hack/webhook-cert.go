//go:build ignore

// Command webhook-cert writes a throwaway CA and a serving certificate for the
// manager's webhook server on 127.0.0.1, so that a local cluster's API server
// can call it: hack/local-cluster.sh puts ca.crt into the CRDs' and webhook
// configurations' caBundle and hands tls.crt and tls.key to the manager.
//
//	go run hack/webhook-cert.go DIR
//
// It is a Go program rather than an openssl recipe so that it needs nothing
// beyond the Go toolchain, and it makes the certificates as the manager's own
// rotation does (internal/certs). Existing files in DIR are kept.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minitask-dev/minitask/internal/certs"
)

// validity is how long the certificates last: a local cluster is remade long
// before.
const validity = 365 * 24 * time.Hour

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run hack/webhook-cert.go DIR")
		os.Exit(2)
	}
	if err := writeCerts(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-cert:", err)
		os.Exit(1)
	}
}

func writeCerts(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "tls.key")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The API server dials https://127.0.0.1:PORT, so the IP SAN is what it checks.
	files, err := certs.NewServingFiles([]string{"127.0.0.1", "localhost"}, validity, time.Now())
	if err != nil {
		return err
	}
	// tls.key last: its presence is what marks the directory as complete.
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"ca.crt", files.CA},
		{"tls.crt", files.Cert},
		{"tls.key", files.Key},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
