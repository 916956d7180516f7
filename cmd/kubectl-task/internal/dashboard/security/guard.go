// Package security is what keeps the dashboard a tool of the one person who
// started it: it answers only requests addressed to it by its own address
// (not a DNS name an attacker points at 127.0.0.1), acts only on POSTs that
// come from its own pages (their Origin, and a token only its pages carry),
// and tells the browser to run no script but its own.
package security

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// TokenField is the form field, and TokenHeader the header, that carry the
// CSRF token of a POST.
const (
	TokenField  = "csrf"
	TokenHeader = "X-CSRF-Token"
)

// ContentSecurityPolicy lets a page load scripts, styles, images and
// connections from the dashboard only, and run no inline script or style;
// no other site may frame it, and forms post only to it.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// maxPostBytes bounds a POST's body: a start form carries at most 50
// params of at most 64 KiB each, and some workspaces.
const maxPostBytes = 4 << 20

// Guard checks every request the dashboard gets.
type Guard struct {
	token string
	// hosts are the Host headers the dashboard answers to, lower case,
	// with the port; anyIP also admits any IP address with port.
	hosts map[string]bool
	anyIP bool
	port  string
}

// NewGuard returns the guard of a dashboard listening on listen, which its
// user asked for as address (the --address flag, an IP or a host name). Its
// CSRF token is random, new for each process.
func NewGuard(listen *net.TCPAddr, address string) (*Guard, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("making the CSRF token: %w", err)
	}
	g := &Guard{token: base64.RawURLEncoding.EncodeToString(b), hosts: map[string]bool{}, port: strconv.Itoa(listen.Port)}
	g.hosts[net.JoinHostPort(listen.IP.String(), g.port)] = true
	if address != "" {
		g.hosts[strings.ToLower(net.JoinHostPort(address, g.port))] = true
	}
	switch {
	case listen.IP.IsLoopback():
		// localhost resolves on this machine only: no one else can point it.
		g.hosts[net.JoinHostPort("localhost", g.port)] = true
	case listen.IP.IsUnspecified():
		// Reached by any address of the machine's; an IP literal cannot be
		// rebound to it by someone else's DNS, a name can.
		g.anyIP = true
		g.hosts[net.JoinHostPort("localhost", g.port)] = true
	}
	return g, nil
}

// Token is the process's CSRF token, for the forms of its pages.
func (g *Guard) Token() string { return g.token }

// AllowedHost reports whether a request's Host header names the dashboard.
func (g *Guard) AllowedHost(host string) bool {
	host = strings.ToLower(host)
	if g.hosts[host] {
		return true
	}
	if !g.anyIP {
		return false
	}
	h, port, err := net.SplitHostPort(host)
	return err == nil && port == g.port && net.ParseIP(h) != nil
}

// allowedOrigin reports whether an Origin header is the dashboard's own.
func (g *Guard) allowedOrigin(origin string) bool {
	host, ok := strings.CutPrefix(origin, "http://")
	return ok && !strings.Contains(host, "/") && g.AllowedHost(host)
}

// CheckPost says why a state-changing request is refused, or "" when it
// may go on: it must come from the dashboard's own pages, by its Origin (a
// browser sends it with every POST; Sec-Fetch-Site where an older one does
// not), and carry the token.
func (g *Guard) CheckPost(r *http.Request) string {
	origin := r.Header.Get("Origin")
	switch {
	case origin != "" && !g.allowedOrigin(origin):
		return fmt.Sprintf("it comes from another site (Origin %q)", origin)
	case origin == "" && r.Header.Get("Sec-Fetch-Site") != "" && r.Header.Get("Sec-Fetch-Site") != "same-origin":
		return fmt.Sprintf("it comes from another site (Sec-Fetch-Site %q)", r.Header.Get("Sec-Fetch-Site"))
	}
	token := r.Header.Get(TokenHeader)
	if token == "" {
		token = r.PostFormValue(TokenField)
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(g.token)) != 1 {
		return "it does not carry this dashboard's token (reload the page that sent it)"
	}
	return ""
}

// Wrap returns next behind the guard: requests to another Host are refused
// (DNS rebinding), and so are requests that change anything (any method but
// GET and HEAD) that CheckPost refuses; every answer gets the headers that
// keep a browser from running or framing anything else.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !g.AllowedHost(r.Host) {
			http.Error(w, fmt.Sprintf("refused: this dashboard answers only to its own address, not to Host %q", r.Host), http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxPostBytes)
			if why := g.CheckPost(r); why != "" {
				http.Error(w, "refused: "+why, http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
