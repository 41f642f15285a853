package core

import (
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// A server on this machine that refuses the connection is retried after at
// most a second each time; anything else keeps the usual backoff.
func TestRetryDelayOfARefusedLocalServer(t *testing.T) {
	s, _ := newTestSession(t, `{"turns":[]}`)
	refused := &ai.AssistantMessage{StopReason: ai.StopError,
		ErrorMessage: "cannot connect to ollama at http://127.0.0.1:11434/v1: connection refused (is the server running?)"}
	unavailable := &ai.AssistantMessage{StopReason: ai.StopError, ErrorStatus: 503, ErrorMessage: "503 connection refused upstream"}
	for _, c := range []struct {
		name    string
		baseURL string
		msg     *ai.AssistantMessage
		want    []time.Duration
	}{
		{"local refused", "http://127.0.0.1:11434/v1", refused, []time.Duration{time.Second, time.Second, time.Second}},
		{"remote refused", "https://llm.example.com/v1", refused, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"local answered 503", "http://localhost:8000/v1", unavailable, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}},
	} {
		s.mu.Lock()
		s.model = &ai.Model{ID: "m", Provider: "p", BaseURL: c.baseURL}
		s.mu.Unlock()
		for i, want := range c.want {
			if got := s.retryDelay(i+1, c.msg); got != want {
				t.Errorf("%s: attempt %d waits %v, want %v", c.name, i+1, got, want)
			}
		}
	}
}
