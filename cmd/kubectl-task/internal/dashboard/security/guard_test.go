package security

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllowedHost(t *testing.T) {
	tests := map[string]struct {
		listen  string
		address string
		allowed []string
		refused []string
	}{
		"loopback": {
			listen: "127.0.0.1:8080", address: "127.0.0.1",
			allowed: []string{"127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080"},
			refused: []string{"evil.example:8080", "127.0.0.1:8081", "127.0.0.1", "localhost", "10.0.0.1:8080", "127.0.0.1.nip.io:8080", ""},
		},
		"loopback, IPv6": {
			listen: "[::1]:8080", address: "::1",
			allowed: []string{"[::1]:8080", "localhost:8080"},
			refused: []string{"127.0.0.1:8080", "evil.example:8080"},
		},
		"every address: any IP, no name but localhost": {
			listen: "0.0.0.0:8080", address: "0.0.0.0",
			allowed: []string{"0.0.0.0:8080", "192.168.1.5:8080", "127.0.0.1:8080", "[fe80::1]:8080", "localhost:8080"},
			refused: []string{"evil.example:8080", "192.168.1.5:9090", "myhost:8080"},
		},
		"a host name asked for": {
			listen: "192.168.1.5:8080", address: "myhost.lan",
			allowed: []string{"myhost.lan:8080", "192.168.1.5:8080"},
			refused: []string{"localhost:8080", "evil.example:8080", "127.0.0.1:8080"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tc.listen)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewGuard(addr, tc.address)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.allowed {
				if !g.AllowedHost(h) {
					t.Errorf("Host %q refused, want allowed", h)
				}
			}
			for _, h := range tc.refused {
				if g.AllowedHost(h) {
					t.Errorf("Host %q allowed, want refused", h)
				}
			}
		})
	}
}

func TestWrap(t *testing.T) {
	g, err := NewGuard(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	const own = "http://127.0.0.1:8080"
	form := func(token string) string { return url.Values{TokenField: {token}}.Encode() }
	tests := map[string]struct {
		method, host, body string
		header             map[string]string
		want               int
		wantBody           string
	}{
		"a GET": {method: http.MethodGet, want: http.StatusOK},
		"a GET to another Host (DNS rebinding)": {method: http.MethodGet, host: "evil.example:8080",
			want: http.StatusForbidden, wantBody: `refused: this dashboard answers only to its own address, not to Host "evil.example:8080"`},
		"a POST from its own page": {method: http.MethodPost, body: form(g.Token()),
			header: map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin"}, want: http.StatusOK},
		"a POST with the token in the header": {method: http.MethodPost,
			header: map[string]string{"Origin": own, TokenHeader: g.Token()}, want: http.StatusOK},
		"a POST from localhost, its other name": {method: http.MethodPost, host: "localhost:8080", body: form(g.Token()),
			header: map[string]string{"Origin": "http://localhost:8080"}, want: http.StatusOK},
		"a POST without Origin, as curl sends it, with the token": {method: http.MethodPost, body: form(g.Token()), want: http.StatusOK},
		"a POST without the token": {method: http.MethodPost, header: map[string]string{"Origin": own},
			want: http.StatusForbidden, wantBody: "refused: it does not carry this dashboard's token (reload the page that sent it)"},
		"a POST with another token": {method: http.MethodPost, body: form("forged"), header: map[string]string{"Origin": own},
			want: http.StatusForbidden, wantBody: "refused: it does not carry this dashboard's token (reload the page that sent it)"},
		"a POST from another site, with the token": {method: http.MethodPost, body: form(g.Token()),
			header: map[string]string{"Origin": "http://evil.example"},
			want:   http.StatusForbidden, wantBody: `refused: it comes from another site (Origin "http://evil.example")`},
		"a POST from another port of loopback": {method: http.MethodPost, body: form(g.Token()),
			header: map[string]string{"Origin": "http://127.0.0.1:9999"},
			want:   http.StatusForbidden, wantBody: `refused: it comes from another site (Origin "http://127.0.0.1:9999")`},
		"a POST from a sandboxed frame": {method: http.MethodPost, body: form(g.Token()), header: map[string]string{"Origin": "null"},
			want: http.StatusForbidden, wantBody: `refused: it comes from another site (Origin "null")`},
		"a POST from another site, by Sec-Fetch-Site alone": {method: http.MethodPost, body: form(g.Token()),
			header: map[string]string{"Sec-Fetch-Site": "cross-site"},
			want:   http.StatusForbidden, wantBody: `refused: it comes from another site (Sec-Fetch-Site "cross-site")`},
		"a DELETE is a change too": {method: http.MethodDelete, header: map[string]string{"Origin": own},
			want: http.StatusForbidden, wantBody: "refused: it does not carry this dashboard's token (reload the page that sent it)"},
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://127.0.0.1:8080/runs/ns/x/cancel", strings.NewReader(tc.body))
			if tc.host != "" {
				r.Host = tc.host
			}
			if tc.body != "" {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			g.Wrap(next).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("status %d, want %d (%s)", w.Code, tc.want, w.Body)
			}
			if tc.wantBody != "" {
				if diff := cmp.Diff(tc.wantBody, strings.TrimSpace(w.Body.String())); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}
			// Refused or not, every answer forbids inline script and framing.
			if got := w.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q", got)
			}
			if got := w.Header().Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options %q", got)
			}
		})
	}
}

func TestTokensDifferPerGuard(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	a, _ := NewGuard(addr, "")
	b, _ := NewGuard(addr, "")
	if a.Token() == b.Token() || len(a.Token()) < 40 {
		t.Errorf("tokens %q and %q: want two long random ones", a.Token(), b.Token())
	}
}

func TestPolicyAllowsNoInlineScriptOrStyle(t *testing.T) {
	for _, directive := range strings.Split(ContentSecurityPolicy, ";") {
		if strings.Contains(directive, "unsafe") || strings.Contains(directive, "*") {
			t.Errorf("the policy's %q lets in more than the dashboard's own files", strings.TrimSpace(directive))
		}
	}
}
