package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// NewToken returns a random URL-safe token of 256 bits.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IsLoopbackHost reports whether host (a name or an address, without a
// port) is this machine only: localhost, a name under .localhost, or a
// loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenEqual compares a presented token with the server's in constant
// time (the digests have one length whatever was presented).
func tokenEqual(got, want string) bool {
	if got == "" || want == "" {
		return false
	}
	a := sha256.Sum256([]byte(got))
	b := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// cookieName is the token cookie of this server. Cookies are not scoped
// by port, so two servers on one host each have their own name.
func (s *Server) cookieName() string {
	return "pisces_token_" + strconv.Itoa(s.port)
}

// presentedTokens lists the tokens a request carries: ?token=, an
// Authorization bearer token, and the cookie.
func (s *Server) presentedTokens(r *http.Request) []string {
	var out []string
	if t := r.URL.Query().Get("token"); t != "" {
		out = append(out, t)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, t, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	if c, err := r.Cookie(s.cookieName()); err == nil && c.Value != "" {
		out = append(out, c.Value)
	}
	return out
}

// authorized reports whether the request carries the server's token (or
// the server runs without one).
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.NoToken {
		return true
	}
	ok := false
	for _, t := range s.presentedTokens(r) {
		if tokenEqual(t, s.opts.Token) {
			ok = true // every candidate is compared: no early exit
		}
	}
	return ok
}

// originAllowed reports whether a browser's Origin may open a WebSocket:
// the server's own origin (http:// and the request's Host) or one of the
// allowed origins (a TLS proxy's https origin goes there). A request
// without Origin is not a browser's.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	o := normalOrigin(origin)
	if o == "" {
		return false
	}
	if o == normalOrigin("http://"+r.Host) {
		return true
	}
	for _, a := range s.opts.AllowedOrigins {
		if o == normalOrigin(a) {
			return true
		}
	}
	return false
}

// normalOrigin is scheme://host[:port] in lower case, without a default
// port or trailing slash ("" when it is not an origin).
func normalOrigin(o string) string {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return ""
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host
}

// loopbackHost reports whether the request's Host names this machine and
// this server's port (with --web-no-token: a page of another site whose
// name was pointed at 127.0.0.1 carries that site's name in Host, which
// blocks DNS rebinding).
func (s *Server) loopbackHost(r *http.Request) bool {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		return false
	}
	return IsLoopbackHost(host) && port == strconv.Itoa(s.port)
}

// withoutToken is the request's URL without its token parameter (the
// other parameters, such as ?session= and ?ws=, are kept).
func withoutToken(u *url.URL) string {
	q := u.Query()
	q.Del("token")
	out := u.EscapedPath()
	if out == "" {
		out = "/"
	}
	if enc := q.Encode(); enc != "" {
		out += "?" + enc
	}
	return out
}
