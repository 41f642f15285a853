package ai

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// ConnectionError is the ProviderError of a request that got no response.
// A refused connection names the provider and the URL it tried ("cannot
// connect to ollama at http://127.0.0.1:11434/v1: connection refused (is
// the server running?)", the question only for a server on this machine);
// any other failure is "connection error: " and detail, the adapter's
// description of err.
func ConnectionError(provider, baseURL string, err error, detail string) *ProviderError {
	if errors.Is(err, syscall.ECONNREFUSED) {
		msg := "cannot connect to " + provider + " at " + baseURL + ": connection refused"
		if IsLoopbackURL(baseURL) {
			msg += " (is the server running?)"
		}
		return &ProviderError{Message: msg}
	}
	return &ProviderError{Message: "connection error: " + detail}
}

// IsLoopbackURL reports whether a URL points at this machine (localhost,
// *.localhost or a loopback address).
func IsLoopbackURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
