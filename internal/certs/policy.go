package certs

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The cert Secret's keys: tls.crt and tls.key as in a kubernetes.io/tls
// Secret, ca.crt as cert-manager writes it, plus the CA's key and the bundle
// of every CA the API server is told to trust.
const (
	caCertKey      = "ca.crt"
	caKeyKey       = "ca.key"
	caBundleKey    = "ca-bundle.crt"
	servingCertKey = corev1.TLSCertKey
	servingKeyKey  = corev1.TLSPrivateKeyKey
	// caRotatedAtAnnotation on the Secret says when its CA was made, to time
	// the switch of the serving certificate to it (see Policy.CAPropagation).
	caRotatedAtAnnotation = "minitask.dev/ca-rotated-at"
)

// backdate is how far into the past certificates start, so that an API
// server whose clock is a little behind still accepts them.
const backdate = time.Hour

// maxTrustedCAs bounds the CA bundle: the current CA and the previous ones
// that are still valid, newest first.
const maxTrustedCAs = 3

// Policy says how long the certificates live and when they are replaced.
type Policy struct {
	// CAValidity is how long a new CA is valid.
	CAValidity time.Duration
	// CARenewBefore is how long before its expiry the CA is replaced.
	CARenewBefore time.Duration
	// ServingValidity is how long a new serving certificate is valid; never
	// longer than the CA that signs it.
	ServingValidity time.Duration
	// ServingRenewBefore is how long before its expiry the serving
	// certificate is replaced.
	ServingRenewBefore time.Duration
	// CAPropagation is how long a new CA is in the CA bundles before any
	// replica serves a certificate it signed: every API server must have
	// picked up the new bundle by then. Until it has passed, the replicas
	// keep serving the certificate the previous CA signed, which the bundles
	// still trust, so no webhook call fails during a CA rotation.
	CAPropagation time.Duration
}

// DefaultPolicy renews the serving certificate every two months and the CA
// once in nine years.
var DefaultPolicy = Policy{
	CAValidity:         10 * 365 * 24 * time.Hour,
	CARenewBefore:      365 * 24 * time.Hour,
	ServingValidity:    90 * 24 * time.Hour,
	ServingRenewBefore: 30 * 24 * time.Hour,
	CAPropagation:      2 * time.Minute,
}

// state is what the cert Secret holds.
type state struct {
	data        map[string][]byte
	caRotatedAt time.Time
}

// plan is the Secret's next state: valid certificates for now, and what
// changed since the last state, and why.
type plan struct {
	state
	// serving is the serving certificate the Secret is to hold.
	serving *keyPair
	// bundle is the PEM bundle of trusted CAs, for the caBundle fields.
	bundle []byte
	// changes says what changed and why, for the log; empty when nothing did.
	changes []string
	// recheck is when the Secret is next due a change.
	recheck time.Time
}

// next computes the Secret's next state from cur, for a serving certificate
// valid for hosts. It is deterministic but for the keys it generates.
func (p Policy) next(cur state, hosts []string, now time.Time) (*plan, error) {
	pl := &plan{state: state{data: maps.Clone(cur.data), caRotatedAt: cur.caRotatedAt}}
	if pl.data == nil {
		pl.data = map[string][]byte{}
	}

	ca, err := parseKeyPair(cur.data[caCertKey], cur.data[caKeyKey])
	reason := ""
	switch {
	case err != nil:
		reason = fmt.Sprintf("no usable CA in %s and %s (%v)", caCertKey, caKeyKey, err)
	case !ca.cert.IsCA:
		reason = caCertKey + " is not a CA certificate"
	case !now.Before(ca.cert.NotAfter.Add(-p.CARenewBefore)):
		reason = "the CA expires at " + ca.cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if reason != "" {
		if ca, err = newCA(now.Add(-backdate), now.Add(p.CAValidity)); err != nil {
			return nil, fmt.Errorf("creating a CA: %w", err)
		}
		pl.caRotatedAt = now
		pl.changes = append(pl.changes, "new CA: "+reason)
	}
	if pl.caRotatedAt.IsZero() {
		// A CA that someone else made: give it the full propagation time.
		pl.caRotatedAt = now
	}
	pl.data[caCertKey], pl.data[caKeyKey] = ca.certPEM, ca.keyPEM

	trusted := trustedCAs(ca.cert, cur.data, now)
	pl.data[caBundleKey] = encodeCerts(trusted)
	pl.bundle = pl.data[caBundleKey]

	switchAt := pl.caRotatedAt.Add(p.CAPropagation)
	serving, reason := p.checkServing(cur.data, hosts, ca.cert, trusted, now, switchAt)
	if reason != "" {
		notAfter := now.Add(p.ServingValidity)
		if ca.cert.NotAfter.Before(notAfter) {
			notAfter = ca.cert.NotAfter
		}
		if serving, err = newServingCert(ca, hosts, now.Add(-backdate), notAfter); err != nil {
			return nil, fmt.Errorf("creating a serving certificate: %w", err)
		}
		pl.changes = append(pl.changes, "new serving certificate: "+reason)
	}
	pl.data[servingCertKey], pl.data[servingKeyKey] = serving.certPEM, serving.keyPEM
	pl.serving = serving

	if !pl.caRotatedAt.Equal(cur.caRotatedAt) && len(pl.changes) == 0 {
		pl.changes = append(pl.changes, "recorded when the CA was made")
	}
	if len(pl.changes) == 0 && !sameData(cur.data, pl.data) {
		pl.changes = append(pl.changes, "rewrote "+caBundleKey+" (dropped expired or extra CAs)")
	}

	pl.recheck = earliest(ca.cert.NotAfter.Add(-p.CARenewBefore), serving.cert.NotAfter.Add(-p.ServingRenewBefore))
	if serving.cert.CheckSignatureFrom(ca.cert) != nil {
		pl.recheck = earliest(pl.recheck, switchAt)
	}
	for _, c := range trusted[1:] {
		pl.recheck = earliest(pl.recheck, c.NotAfter)
	}
	return pl, nil
}

// checkServing returns the Secret's serving certificate and "" when it can
// stay, else why it must be replaced. A certificate the previous CA signed
// stays until switchAt.
func (p Policy) checkServing(data map[string][]byte, hosts []string, ca *x509.Certificate, trusted []*x509.Certificate,
	now, switchAt time.Time) (*keyPair, string) {
	serving, err := parseKeyPair(data[servingCertKey], data[servingKeyKey])
	if err != nil {
		return nil, fmt.Sprintf("none usable in %s and %s (%v)", servingCertKey, servingKeyKey, err)
	}
	roots := x509.NewCertPool()
	for _, c := range trusted {
		roots.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := serving.cert.Verify(opts); err != nil {
		return nil, fmt.Sprintf("the old one does not verify against the CA bundle (%v)", err)
	}
	for _, h := range hosts {
		if err := serving.cert.VerifyHostname(h); err != nil {
			return nil, "the old one is not valid for " + h
		}
	}
	if !now.Before(serving.cert.NotAfter.Add(-p.ServingRenewBefore)) {
		return nil, "the old one expires at " + serving.cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if serving.cert.CheckSignatureFrom(ca) != nil && !now.Before(switchAt) {
		return nil, "the old one was signed by the previous CA, and the new CA has had time to propagate"
	}
	return serving, ""
}

// trustedCAs is the CA bundle: ca, then the previous CAs (from the old bundle
// and the old ca.crt) that have not expired.
func trustedCAs(ca *x509.Certificate, data map[string][]byte, now time.Time) []*x509.Certificate {
	trusted := []*x509.Certificate{ca}
	for _, c := range append(parseCerts(data[caBundleKey]), parseCerts(data[caCertKey])...) {
		if len(trusted) == maxTrustedCAs {
			break
		}
		if c.IsCA && now.Before(c.NotAfter) && !containsCert(trusted, c) {
			trusted = append(trusted, c)
		}
	}
	return trusted
}

func containsCert(certs []*x509.Certificate, c *x509.Certificate) bool {
	for _, o := range certs {
		if o.Equal(c) {
			return true
		}
	}
	return false
}

func sameData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
