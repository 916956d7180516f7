package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// TestServingTLS checks the TLS that the manager's webhook server speaks
// (ServingTLSOptions, as main.go sets it) on a real controller-runtime
// webhook server.
func TestServingTLS(t *testing.T) {
	// Go servers refuse TLS 1.0 and 1.1 by default; this brings back the old
	// default, so that only ServingTLSOptions can refuse them here.
	t.Setenv("GODEBUG", "tls10server=1")
	ca, err := newCA(time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	serving, err := newServingCert(ca, []string{"127.0.0.1"}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)

	tests := map[string]struct {
		enableHTTP2 bool
		client      *tls.Config
		wantErr     string
		wantALPN    string
	}{
		"a client offering only TLS 1.1 is refused": {
			client:  &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11},
			wantErr: "protocol version not supported",
		},
		"a client offering only TLS 1.0 is refused": {
			client:  &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10},
			wantErr: "protocol version not supported",
		},
		"TLS 1.2 is served": {
			client: &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12},
		},
		"TLS 1.3 is served": {
			client: &tls.Config{MinVersion: tls.VersionTLS13},
		},
		"HTTP/2 is off by default": {
			client:   &tls.Config{NextProtos: []string{"h2", "http/1.1"}},
			wantALPN: "http/1.1",
		},
		"HTTP/2 is served when enabled": {
			enableHTTP2: true,
			client:      &tls.Config{NextProtos: []string{"h2", "http/1.1"}},
			wantALPN:    "h2",
		},
	}
	addrs := map[bool]string{false: startWebhookServer(t, serving, false), true: startWebhookServer(t, serving, true)}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := tc.client.Clone()
			cfg.RootCAs, cfg.ServerName = roots, "127.0.0.1"
			conn, err := tls.Dial("tcp", addrs[tc.enableHTTP2], cfg)
			if tc.wantErr != "" {
				if err == nil {
					_ = conn.Close()
					t.Fatalf("handshake succeeded with TLS %s; want it refused", tls.VersionName(conn.ConnectionState().Version))
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("handshake error %q; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			defer func() { _ = conn.Close() }()
			if got := conn.ConnectionState().NegotiatedProtocol; got != tc.wantALPN {
				t.Errorf("negotiated protocol %q, want %q", got, tc.wantALPN)
			}
		})
	}
}

// startWebhookServer serves kp on a controller-runtime webhook server with
// the manager's TLS options, until the test ends.
func startWebhookServer(t *testing.T, kp *keyPair, enableHTTP2 bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)

	cert, err := tls.X509KeyPair(kp.certPEM, kp.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(ServingTLSOptions(enableHTTP2), func(c *tls.Config) {
		c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
	})
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: p, TLSOpts: opts})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			_ = conn.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook server on %s did not start: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
