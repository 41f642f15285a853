package ai

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestConnectionError(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	wrapped := fmt.Errorf("Post %q: %w", "http://x", refused)
	for _, c := range []struct {
		provider, url string
		err           error
		want          string
	}{
		{"ollama", "http://127.0.0.1:11434/v1", wrapped, "cannot connect to ollama at http://127.0.0.1:11434/v1: connection refused (is the server running?)"},
		{"lmstudio", "http://localhost:1234/v1", refused, "cannot connect to lmstudio at http://localhost:1234/v1: connection refused (is the server running?)"},
		{"corp", "https://llm.corp.example/v1", refused, "cannot connect to corp at https://llm.corp.example/v1: connection refused"},
		{"openai", "https://api.openai.com/v1", errors.New("dial tcp: lookup api.openai.com: no such host"), "connection error: detail"},
	} {
		got := ConnectionError(c.provider, c.url, c.err, "detail")
		if got.Message != c.want || got.Status != 0 {
			t.Errorf("%s: got %d %q, want %q", c.provider, got.Status, got.Message, c.want)
		}
	}
}

func TestIsLoopbackURL(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:11434/v1": true, "http://localhost:8080": true, "http://[::1]:8000/v1": true,
		"http://llm.localhost/v1": true, "http://127.1.2.3": true,
		"https://api.openai.com/v1": false, "http://10.0.0.5:8000/v1": false, "not a url\x7f": false, "": false,
	} {
		if got := IsLoopbackURL(u); got != want {
			t.Errorf("IsLoopbackURL(%q) = %v, want %v", u, got, want)
		}
	}
}
