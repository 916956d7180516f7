package certs

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

// TestNewServingFiles: the files make a key pair that a client trusting the CA
// accepts for every host, for as long as asked.
func TestNewServingFiles(t *testing.T) {
	now := time.Now()
	files, err := NewServingFiles([]string{"127.0.0.1", "localhost"}, 365*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatalf("tls.crt and tls.key are not a key pair: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(files.CA) {
		t.Fatal("ca.crt holds no certificate")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		for _, at := range []time.Time{now, now.Add(364 * 24 * time.Hour)} {
			opts := x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			if _, err := pair.Leaf.Verify(opts); err != nil {
				t.Errorf("a client trusting ca.crt refuses tls.crt for %s at %s: %v", host, at, err)
			}
		}
	}
}
