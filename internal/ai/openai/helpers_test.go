package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// captured is one request the fake server received.
type captured struct {
	Method string
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// fakeServer is a local stand-in for the vendor's API.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newServer(t *testing.T, h http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
		_ = json.Unmarshal(raw, &c.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, c)
		fs.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) only(t *testing.T) captured {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(fs.reqs))
	}
	return fs.reqs[0]
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveSSE answers with a captured stream, byte for byte.
func serveSSE(t *testing.T, name string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(200)
		_, _ = w.Write(body)
	}
}

// serveCut sends the stream and then drops the connection without ending
// the chunked body, as a network failure does.
func serveCut(t *testing.T, name string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write(body)
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
	}
}

// serveSlow sends the first n events of a stream and then waits for the
// client to go away (or a minute, a safety bound).
func serveSlow(t *testing.T, name string, n int) http.HandlerFunc {
	body := string(fixture(t, name))
	events := strings.SplitAfter(body, "\n\n")
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i := 0; i < n && i < len(events); i++ {
			_, _ = io.WriteString(w, events[i])
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
}

// serveEvents answers with the server-sent events text sse.
func serveEvents(sse string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(sse))
	}
}

func serveError(status int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// recorder keeps the events a provider emitted, in a compact form.
type recorder struct {
	events []ai.AssistantEvent
	lines  []string
}

func (r *recorder) emit(ev ai.AssistantEvent) {
	r.events = append(r.events, ev)
	var s string
	switch ev.Type {
	case ai.EvStart:
		s = "start"
	case ai.EvTextStart, ai.EvThinkingStart:
		s = fmt.Sprintf("%s %d", ev.Type, ev.ContentIndex)
	case ai.EvToolCallStart:
		s = fmt.Sprintf("%s %d %s %s", ev.Type, ev.ContentIndex, ev.ID, ev.ToolName)
	case ai.EvTextDelta, ai.EvThinkingDelta, ai.EvToolCallDelta:
		s = fmt.Sprintf("%s %d %q", ev.Type, ev.ContentIndex, ev.Delta)
	case ai.EvTextEnd, ai.EvThinkingEnd:
		s = fmt.Sprintf("%s %d %q", ev.Type, ev.ContentIndex, ev.Content)
	case ai.EvToolCallEnd:
		s = fmt.Sprintf("%s %d %s", ev.Type, ev.ContentIndex, ev.ToolCall.Arguments)
	case ai.EvDone, ai.EvError:
		s = fmt.Sprintf("%s %s", ev.Type, ev.Reason)
	default:
		s = ev.Type
	}
	r.lines = append(r.lines, s)
}

func (r *recorder) check(t *testing.T, want ...string) {
	t.Helper()
	if strings.Join(r.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(r.lines, "\n  "), strings.Join(want, "\n  "))
	}
}

// checkFinal asserts the stream ended with one done/error event carrying msg.
func (r *recorder) checkFinal(t *testing.T, msg *ai.AssistantMessage) {
	t.Helper()
	if len(r.events) == 0 || r.events[0].Type != ai.EvStart {
		t.Fatalf("first event is not start: %v", r.lines)
	}
	last := r.events[len(r.events)-1]
	if last.Type != ai.EvDone && last.Type != ai.EvError {
		t.Fatalf("last event is %s", last.Type)
	}
	if last.Message != msg {
		t.Errorf("final event does not carry the returned message")
	}
	for _, ev := range r.events[:len(r.events)-1] {
		if ev.Type == ai.EvDone || ev.Type == ai.EvError {
			t.Errorf("terminal event before the end: %v", r.lines)
		}
	}
}

func testModel(api, baseURL string) *ai.Model {
	return &ai.Model{
		ID: "gpt-test", Name: "GPT Test", API: api, Provider: "openai", BaseURL: baseURL,
		Input:         []string{"text", "image"},
		Cost:          ai.ModelCost{Input: 2, Output: 8, CacheRead: 0.5},
		ContextWindow: 400000, MaxTokens: 128000,
	}
}

func userReq(model *ai.Model, text string) *ai.Request {
	return &ai.Request{
		Model:        model,
		SystemPrompt: "You are a test.",
		Messages:     []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(text), Timestamp: 1}},
		APIKey:       "sk-test-123",
	}
}

// jsonEq compares a decoded JSON value with the JSON text want.
func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want JSON: %v", what, err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

func providerError(t *testing.T, msg *ai.AssistantMessage) {
	t.Helper()
	if msg.StopReason != ai.StopError {
		t.Fatalf("stopReason %q, want error (%s)", msg.StopReason, msg.ErrorMessage)
	}
}

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// cancelOn returns a context that emit cancels at an event of type typ
// (the user pressing Esc), and emit, which records into rec.
func cancelOn(t *testing.T, rec *recorder, typ string) (context.Context, func(ai.AssistantEvent)) {
	ctx, cancel := context.WithCancel(withTimeout(t))
	t.Cleanup(cancel)
	return ctx, func(ev ai.AssistantEvent) {
		rec.emit(ev)
		if ev.Type == typ {
			cancel()
		}
	}
}

func paramsJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// streamFrom streams the user message "x" to a model of api on a fake
// server answering with h, recording the events.
func streamFrom(t *testing.T, p ai.Provider, api string, h http.HandlerFunc) (*fakeServer, *recorder, *ai.AssistantMessage) {
	t.Helper()
	srv := newServer(t, h)
	rec := new(recorder)
	msg := p.Stream(withTimeout(t), userReq(testModel(api, srv.URL), "x"), rec.emit)
	return srv, rec, msg
}

// streamStatusError streams from a server answering with an error status
// and checks the provider error: status, message and retry delay, after
// one request.
func streamStatusError(t *testing.T, p ai.Provider, api string, status int, header map[string]string, body, message string, retry time.Duration) (*recorder, *ai.AssistantMessage) {
	t.Helper()
	srv, rec, msg := streamFrom(t, p, api, serveError(status, header, body))
	rec.check(t, "start", "error error")
	providerError(t, msg)
	if msg.ErrorStatus != status {
		t.Errorf("status %d, want %d", msg.ErrorStatus, status)
	}
	if want := (&ai.ProviderError{Status: status, Message: message}).Error(); msg.ErrorMessage != want {
		t.Errorf("message %q, want %q", msg.ErrorMessage, want)
	}
	if msg.RetryAfter != retry {
		t.Errorf("retryAfter %v, want %v", msg.RetryAfter, retry)
	}
	// The SDK's own retries are off: one request only.
	srv.only(t)
	return rec, msg
}

// streamCut streams the captured stream name from a server that, in mode
// "reset", drops the connection after it, or in mode "eof" ends the body
// cleanly though the stream is not finished, and checks that the partial
// text came before a connection error.
func streamCut(t *testing.T, p ai.Provider, api, name, mode, partial string) *ai.AssistantMessage {
	t.Helper()
	h := serveCut(t, name)
	if mode == "eof" {
		h = serveSSE(t, name)
	}
	_, rec, msg := streamFrom(t, p, api, h)
	rec.check(t, "start", "text_start 0", fmt.Sprintf("text_delta 0 %q", partial), "error error")
	providerError(t, msg)
	if msg.ErrorStatus != 0 || !strings.HasPrefix(msg.ErrorMessage, "stream ended unexpectedly") {
		t.Errorf("%s: status %d message %q", mode, msg.ErrorStatus, msg.ErrorMessage)
	}
	if msg.Content[0].Text != partial {
		t.Errorf("%s: partial content %+v", mode, msg.Content)
	}
	return msg
}
