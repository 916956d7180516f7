package certs

import "crypto/tls"

// ServingTLSOptions are the TLS settings of the webhook and metrics servers:
// TLS 1.2 at least, and HTTP/1.1 only unless enableHTTP2, since HTTP/2 rapid
// reset (CVE-2023-44487) lets one client exhaust the server.
func ServingTLSOptions(enableHTTP2 bool) []func(*tls.Config) {
	opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	if !enableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}
