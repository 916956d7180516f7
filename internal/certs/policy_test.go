package certs

import (
	"crypto/x509"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testPolicy = Policy{
	CAValidity:         100 * time.Hour,
	CARenewBefore:      10 * time.Hour,
	ServingValidity:    20 * time.Hour,
	ServingRenewBefore: 5 * time.Hour,
	CAPropagation:      time.Minute,
}

var testHosts = []string{"webhook.ns.svc", "127.0.0.1"}

// outcome summarizes a plan relative to the Secret it started from: "old CA"
// is the CA the Secret held, "new CA" one the plan made.
type outcome struct {
	Changed         bool
	Bundle          []string
	ServingSignedBy string
	NewServing      bool
	RecheckIn       time.Duration
}

func TestPolicyNext(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// issued is a valid Secret made at t0.
	issued := mustPlan(t, state{}, t0).state

	tests := map[string]struct {
		cur  state
		now  time.Time
		want outcome
	}{
		"an empty Secret gets a CA and a serving certificate": {
			cur: state{}, now: t0,
			want: outcome{Changed: true, Bundle: []string{"new CA"}, ServingSignedBy: "new CA", NewServing: true,
				RecheckIn: 15 * time.Hour},
		},
		"a valid Secret stays as it is until its serving certificate is due": {
			cur: issued, now: t0.Add(time.Hour),
			want: outcome{Bundle: []string{"old CA"}, ServingSignedBy: "old CA", RecheckIn: 14 * time.Hour},
		},
		"a serving certificate due for renewal is replaced by one from the same CA": {
			cur: issued, now: t0.Add(15 * time.Hour),
			want: outcome{Changed: true, Bundle: []string{"old CA"}, ServingSignedBy: "old CA", NewServing: true,
				RecheckIn: 15 * time.Hour},
		},
		"a serving certificate for other hosts is replaced": {
			cur: withData(issued, func(d map[string][]byte) {
				kp := mustParse(t, d[caCertKey], d[caKeyKey])
				other, err := newServingCert(kp, []string{"other.svc"}, t0, t0.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				d[servingCertKey], d[servingKeyKey] = other.certPEM, other.keyPEM
			}),
			now:  t0,
			want: outcome{Changed: true, Bundle: []string{"old CA"}, ServingSignedBy: "old CA", NewServing: true, RecheckIn: 15 * time.Hour},
		},
		"a missing CA key makes a new CA, trusted next to the old one, which still signs what is served": {
			cur: withData(issued, func(d map[string][]byte) { delete(d, caKeyKey) }), now: t0.Add(time.Hour),
			want: outcome{Changed: true, Bundle: []string{"new CA", "old CA"}, ServingSignedBy: "old CA", RecheckIn: time.Minute},
		},
		"a CA due for renewal is replaced the same way": {
			cur: issued, now: t0.Add(90 * time.Hour),
			want: outcome{Changed: true, Bundle: []string{"new CA", "old CA"}, ServingSignedBy: "new CA", NewServing: true,
				RecheckIn: 10 * time.Hour},
		},
		"once the new CA has propagated, the serving certificate moves to it": {
			cur: mustPlan(t, withData(issued, func(d map[string][]byte) { delete(d, caKeyKey) }), t0.Add(time.Hour)).state,
			now: t0.Add(time.Hour + time.Minute),
			want: outcome{Changed: true, Bundle: []string{"old CA", "previous"}, ServingSignedBy: "old CA", NewServing: true,
				RecheckIn: 15 * time.Hour},
		},
		"an expired previous CA leaves the bundle": {
			cur:  mustPlan(t, withData(issued, func(d map[string][]byte) { delete(d, caKeyKey) }), t0.Add(50*time.Hour)).state,
			now:  t0.Add(time.Hour + 100*time.Hour),
			want: outcome{Changed: true, Bundle: []string{"old CA"}, ServingSignedBy: "old CA", NewServing: true, RecheckIn: 15 * time.Hour},
		},
		"a serving certificate no trusted CA signed is replaced at once": {
			cur: withData(issued, func(d map[string][]byte) {
				other := mustPlan(t, state{}, t0).data
				d[servingCertKey], d[servingKeyKey] = other[servingCertKey], other[servingKeyKey]
			}),
			now:  t0,
			want: outcome{Changed: true, Bundle: []string{"old CA"}, ServingSignedBy: "old CA", NewServing: true, RecheckIn: 15 * time.Hour},
		},
		"a CA without its rotation time gets the full propagation time": {
			cur: state{data: issued.data}, now: t0.Add(time.Hour),
			want: outcome{Changed: true, Bundle: []string{"old CA"}, ServingSignedBy: "old CA", RecheckIn: 14 * time.Hour},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pl := mustPlan(t, tc.cur, tc.now)
			if diff := cmp.Diff(tc.want, summarize(t, tc.cur, pl, tc.now)); diff != "" {
				t.Errorf("plan (-want +got):\n%s\nchanges: %q", diff, pl.changes)
			}
			checkServingCert(t, pl, tc.now)
			again := mustPlan(t, pl.state, tc.now)
			if len(again.changes) != 0 {
				t.Errorf("a second look at once changes %q; want nothing", again.changes)
			}
		})
	}
}

// summarize labels the plan's CAs as the Secret's ("old CA"), the plan's
// own ("new CA") or one the Secret held as previous ("previous").
func summarize(t *testing.T, cur state, pl *plan, now time.Time) outcome {
	t.Helper()
	oldCA := parseCerts(cur.data[caCertKey])
	newCA := mustParse(t, pl.data[caCertKey], pl.data[caKeyKey]).cert
	label := func(c *x509.Certificate) string {
		switch {
		case len(oldCA) > 0 && c.Equal(oldCA[0]):
			return "old CA"
		case c.Equal(newCA):
			return "new CA"
		}
		return "previous"
	}
	o := outcome{
		Changed:    len(pl.changes) > 0,
		NewServing: string(cur.data[servingCertKey]) != string(pl.data[servingCertKey]),
		RecheckIn:  pl.recheck.Sub(now),
	}
	bundle := parseCerts(pl.bundle)
	for _, c := range bundle {
		o.Bundle = append(o.Bundle, label(c))
	}
	for _, c := range bundle {
		if pl.serving.cert.CheckSignatureFrom(c) == nil {
			o.ServingSignedBy = label(c)
		}
	}
	return o
}

// checkServingCert checks what the API server will check: the served
// certificate verifies against the bundle for every host.
func checkServingCert(t *testing.T, pl *plan, now time.Time) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pl.bundle) {
		t.Fatal("the CA bundle holds no certificate")
	}
	for _, h := range testHosts {
		_, err := pl.serving.cert.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: now})
		if err != nil {
			t.Errorf("serving certificate for %s: %v", h, err)
		}
	}
}

func mustPlan(t *testing.T, cur state, now time.Time) *plan {
	t.Helper()
	pl, err := testPolicy.next(cur, testHosts, now)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func mustParse(t *testing.T, certPEM, keyPEM []byte) *keyPair {
	t.Helper()
	kp, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// withData is s with a copy of its data that edit changed.
func withData(s state, edit func(map[string][]byte)) state {
	s.data = maps.Clone(s.data)
	edit(s.data)
	return s
}
