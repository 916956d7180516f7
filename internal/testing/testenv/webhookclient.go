package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"
)

// WebhookClient returns the base URL of the webhook server the Env runs
// (https://127.0.0.1:PORT) and an HTTP client that trusts its certificate,
// for tests and benchmarks that call the webhooks as the API server does.
func (e *Env) WebhookClient() (baseURL string, c *http.Client, err error) {
	wio := e.env.WebhookInstallOptions
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(wio.LocalServingCAData) {
		return "", nil, errors.New("the webhook server's CA holds no certificate")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	baseURL = "https://" + net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	return baseURL, &http.Client{Transport: transport}, nil
}
