package google

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// captured is what the fake Gemini server received.
type captured struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// server is a local stand-in for generativelanguage.googleapis.com.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := captured{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
		if err := json.Unmarshal(raw, &c.Body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, c)
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) last(t *testing.T) captured {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(s.reqs))
	}
	return s.reqs[0]
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseFile serves a captured stream the way Gemini does: one write and
// flush per event.
func sseFile(t *testing.T, name string) func(http.ResponseWriter, *http.Request) {
	data := readTestdata(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range strings.SplitAfter(string(data), "\r\n\r\n") {
			if ev == "" {
				continue
			}
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

func jsonError(t *testing.T, status int, name string, header map[string]string) func(http.ResponseWriter, *http.Request) {
	data := readTestdata(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		w.Write(data)
	}
}

func testModel(baseURL, id string) *ai.Model {
	return &ai.Model{
		ID: id, Name: id, API: API, Provider: "google", BaseURL: baseURL,
		Reasoning: true, Input: []string{"text", "image"},
		Cost:          ai.ModelCost{Input: 0.3, Output: 2.5, CacheRead: 0.075},
		ContextWindow: 1048576, MaxTokens: 65536,
	}
}

func simpleRequest(m *ai.Model) *ai.Request {
	return &ai.Request{
		Model:         m,
		SystemPrompt:  "You are terse.",
		Messages:      []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi"), Timestamp: 1}},
		ThinkingLevel: "off",
		APIKey:        "test-key",
	}
}

// recorder keeps the events a stream emitted, one line each.
type recorder struct {
	events []ai.AssistantEvent
}

func (r *recorder) emit(ev ai.AssistantEvent) {
	ev.Snapshot = nil
	r.events = append(r.events, ev)
}

func (r *recorder) lines() []string {
	var out []string
	for _, ev := range r.events {
		s := ev.Type
		switch ev.Type {
		case ai.EvStart:
		case ai.EvTextDelta, ai.EvThinkingDelta, ai.EvToolCallDelta:
			s += fmt.Sprintf(" %d %q", ev.ContentIndex, ev.Delta)
		case ai.EvTextEnd, ai.EvThinkingEnd:
			s += fmt.Sprintf(" %d %q", ev.ContentIndex, ev.Content)
		case ai.EvToolCallStart:
			s += fmt.Sprintf(" %d %s", ev.ContentIndex, ev.ToolName)
		case ai.EvToolCallEnd:
			s += fmt.Sprintf(" %d %s %s", ev.ContentIndex, ev.ToolCall.Name, ev.ToolCall.Arguments)
		case ai.EvDone, ai.EvError:
			s += " " + ev.Reason
		default:
			s += fmt.Sprintf(" %d", ev.ContentIndex)
		}
		out = append(out, s)
	}
	return out
}

func checkLines(t *testing.T, rec *recorder, want []string) {
	t.Helper()
	got := rec.lines()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

func run(t *testing.T, srv *server, req *ai.Request) (*ai.AssistantMessage, *recorder) {
	t.Helper()
	rec := &recorder{}
	msg := New().Stream(context.Background(), req, rec.emit)
	checkFinal(t, rec, msg)
	return msg, rec
}

// checkFinal asserts the contract of ai.Provider: start first, one final
// event carrying the returned message.
func checkFinal(t *testing.T, rec *recorder, msg *ai.AssistantMessage) {
	t.Helper()
	if len(rec.events) < 2 || rec.events[0].Type != ai.EvStart {
		t.Fatalf("stream must begin with start and end with done/error: %v", rec.lines())
	}
	last := rec.events[len(rec.events)-1]
	if last.Type != ai.EvDone && last.Type != ai.EvError {
		t.Fatalf("last event %s", last.Type)
	}
	if last.Message != msg {
		t.Errorf("the final event does not carry the returned message")
	}
	for _, ev := range rec.events[:len(rec.events)-1] {
		if ev.Type == ai.EvDone || ev.Type == ai.EvError {
			t.Errorf("final event %s before the end", ev.Type)
		}
	}
}

func TestText(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	m := testModel(srv.URL, "gemini-2.5-flash")
	msg, rec := run(t, srv, simpleRequest(m))
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "Hello"`,
		`text_delta 0 ", world"`,
		`text_delta 0 "!"`,
		`text_end 0 "Hello, world!"`,
		"done stop",
	})
	if msg.StopReason != ai.StopStop || msg.RawStopReason != "STOP" {
		t.Errorf("stop %q raw %q", msg.StopReason, msg.RawStopReason)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello, world!" {
		t.Errorf("content %+v", msg.Content)
	}
	if msg.ResponseID != "mJYaaY-DEu2Qz7IP4dKb2Qs" {
		t.Errorf("responseId %q", msg.ResponseID)
	}
	if msg.API != API || msg.Provider != "google" || msg.Model != "gemini-2.5-flash" {
		t.Errorf("identity %q %q %q", msg.API, msg.Provider, msg.Model)
	}
	if msg.Usage.Input != 9 || msg.Usage.Output != 3 || msg.Usage.TotalTokens != 12 {
		t.Errorf("usage %+v", msg.Usage)
	}

	c := srv.last(t)
	if c.Method != http.MethodPost || c.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request %s %s?%s", c.Method, c.Path, c.Query)
	}
	if got := c.Header.Get("x-goog-api-key"); got != "test-key" {
		t.Errorf("x-goog-api-key %q", got)
	}
	if got := c.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("content-type %q", got)
	}
	wantBody := `{
		"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
		"systemInstruction": {"parts": [{"text": "You are terse."}]},
		"generationConfig": {"maxOutputTokens": 32000, "thinkingConfig": {"thinkingBudget": 0}}
	}`
	assertJSON(t, c.Body, wantBody)
}

// assertJSON compares a decoded body with the expected JSON text.
func assertJSON(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(normalize(got), w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		e, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("JSON differs\n got: %s\nwant: %s", g, e)
	}
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func TestLFLineEndings(t *testing.T) {
	data := strings.ReplaceAll(string(readTestdata(t, "text.sse")), "\r\n", "\n")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, data)
	})
	msg, _ := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	if msg.StopReason != ai.StopStop || msg.Content[0].Text != "Hello, world!" {
		t.Errorf("got %s %+v", msg.StopReason, msg.Content)
	}
}

func TestThinking(t *testing.T) {
	srv := newServer(t, sseFile(t, "thinking.sse"))
	m := testModel(srv.URL+"/v1beta", "gemini-3-pro-preview")
	req := simpleRequest(m)
	req.ThinkingLevel = "medium"
	msg, rec := run(t, srv, req)
	checkLines(t, rec, []string{
		"start",
		"thinking_start 0",
		`thinking_delta 0 "**Weighing the question**\n\nThe user asks"`,
		`thinking_delta 0 " for 2+2."`,
		`thinking_end 0 "**Weighing the question**\n\nThe user asks for 2+2."`,
		"text_start 1",
		`text_delta 1 "2 + 2 = 4"`,
		`text_delta 1 "."`,
		`text_end 1 "2 + 2 = 4."`,
		"done stop",
	})
	if got := msg.Content[1].TextSignature; got != "Q2lVQmNzak1BVGhvdWdodFNpZ25hdHVyZQ==" {
		t.Errorf("text signature %q", got)
	}
	if msg.ThinkingLevel != "medium" {
		t.Errorf("thinkingLevel %q", msg.ThinkingLevel)
	}
	if msg.Usage.Output != 8+99 || msg.Usage.Input != 14 {
		t.Errorf("usage %+v", msg.Usage)
	}
	c := srv.last(t)
	if c.Path != "/v1beta/models/gemini-3-pro-preview:streamGenerateContent" {
		t.Errorf("path %s (a base URL ending in /v1beta must not get a second one)", c.Path)
	}
	assertJSON(t, c.Body["generationConfig"], `{"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "HIGH"}}`)
}

var generatedID = regexp.MustCompile(`^[a-z]+_\d+_\d+$`)

func TestToolCall(t *testing.T) {
	srv := newServer(t, sseFile(t, "tool_call.sse"))
	m := testModel(srv.URL, "gemini-2.5-flash")
	req := simpleRequest(m)
	req.Tools = []ai.ToolSpec{{
		Name:        "read",
		Description: "Read a file",
		Parameters:  json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"}},"required":["path"],"additionalProperties":false}`),
	}, {
		Name:        "noargs",
		Description: "Takes nothing",
	}}
	req.ThinkingLevel = "high"
	req.MaxTokens = 4096
	msg, rec := run(t, srv, req)
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "I'll read the file."`,
		`text_end 0 "I'll read the file."`,
		"toolcall_start 1 read",
		`toolcall_delta 1 "{\"path\":\"README.md\",\"offset\":1}"`,
		`toolcall_end 1 read {"path":"README.md","offset":1}`,
		"done toolUse",
	})
	tc := msg.Content[1]
	if !generatedID.MatchString(tc.ID) || !strings.HasPrefix(tc.ID, "read_") {
		t.Errorf("generated id %q", tc.ID)
	}
	if tc.ThoughtSignature != "CqIBAXLI2nxFq1k7nS1uYmdlbnNpZ25hdHVyZQ==" {
		t.Errorf("thought signature %q", tc.ThoughtSignature)
	}
	if string(tc.Arguments) != `{"path":"README.md","offset":1}` {
		t.Errorf("arguments keep Gemini's order: %s", tc.Arguments)
	}
	if msg.StopReason != ai.StopToolUse || msg.RawStopReason != "STOP" {
		t.Errorf("stop %q raw %q", msg.StopReason, msg.RawStopReason)
	}
	c := srv.last(t)
	assertJSON(t, c.Body["tools"], `[{"functionDeclarations": [
		{"name": "read", "description": "Read a file", "parametersJsonSchema":
			{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"}},"required":["path"],"additionalProperties":false}},
		{"name": "noargs", "description": "Takes nothing", "parametersJsonSchema": {"type":"object","properties":{}}}
	]}]`)
	assertJSON(t, c.Body["generationConfig"], `{"maxOutputTokens": 4096, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 24576}}`)
}

func TestSeveralToolCalls(t *testing.T) {
	srv := newServer(t, sseFile(t, "tool_calls.sse"))
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-pro")))
	checkLines(t, rec, []string{
		"start",
		"toolcall_start 0 ls",
		`toolcall_delta 0 "{\"path\":\"src\"}"`,
		`toolcall_end 0 ls {"path":"src"}`,
		"toolcall_start 1 read",
		`toolcall_delta 1 "{\"path\":\"go.mod\",\"limit\":20}"`,
		`toolcall_end 1 read {"path":"go.mod","limit":20}`,
		"toolcall_start 2 bash",
		`toolcall_delta 2 "{\"command\":\"go test ./...\",\"timeout\":60}"`,
		`toolcall_end 2 bash {"command":"go test ./...","timeout":60}`,
		"toolcall_start 3 ls",
		`toolcall_delta 3 "{}"`,
		`toolcall_end 3 ls {}`,
		"done toolUse",
	})
	calls := msg.ToolCalls()
	if len(calls) != 4 {
		t.Fatalf("%d tool calls", len(calls))
	}
	if calls[1].ID != "call-7f3a" {
		t.Errorf("Gemini's own id must be kept: %q", calls[1].ID)
	}
	seen := map[string]bool{}
	for i, c := range calls {
		if i != 1 && !generatedID.MatchString(c.ID) {
			t.Errorf("call %d id %q", i, c.ID)
		}
		if seen[c.ID] {
			t.Errorf("duplicate id %q", c.ID)
		}
		seen[c.ID] = true
	}
	if calls[0].ThoughtSignature != "CsoBAXLI2nzTb29sMQ==" || calls[1].ThoughtSignature != "" {
		t.Errorf("signatures %q %q", calls[0].ThoughtSignature, calls[1].ThoughtSignature)
	}
	// The toolcall_start event names the id the block got.
	for _, ev := range rec.events {
		if ev.Type == ai.EvToolCallStart && ev.ID != msg.Content[ev.ContentIndex].ID {
			t.Errorf("toolcall_start id %q vs block %q", ev.ID, msg.Content[ev.ContentIndex].ID)
		}
	}
}

func TestUsageAndCost(t *testing.T) {
	srv := newServer(t, sseFile(t, "usage_cached.sse"))
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	u := msg.Usage
	if u.Input != 4000 || u.Output != 1500 || u.CacheRead != 16000 || u.CacheWrite != 0 || u.TotalTokens != 21500 {
		t.Errorf("usage %+v", u)
	}
	near := func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
	if !near(u.Cost.Input, 4000*0.3/1e6) || !near(u.Cost.Output, 1500*2.5/1e6) || !near(u.Cost.CacheRead, 16000*0.075/1e6) ||
		!near(u.Cost.Total, u.Cost.Input+u.Cost.Output+u.Cost.CacheRead) {
		t.Errorf("cost %+v", u.Cost)
	}
	if done := rec.events[len(rec.events)-1]; done.Type != ai.EvDone || !reflect.DeepEqual(*done.Usage, u) {
		t.Errorf("done event usage %+v", done.Usage)
	}
}

func TestMaxTokens(t *testing.T) {
	srv := newServer(t, sseFile(t, "max_tokens.sse"))
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	if msg.StopReason != ai.StopLength || msg.RawStopReason != "MAX_TOKENS" || msg.Content[0].Text != "Once upon a time, there" {
		t.Errorf("got %s %s %+v", msg.StopReason, msg.RawStopReason, msg.Content)
	}
	if got := rec.lines(); got[len(got)-1] != "done length" {
		t.Errorf("last event %s", got[len(got)-1])
	}
}

func TestSafetyFinish(t *testing.T) {
	srv := newServer(t, sseFile(t, "safety.sse"))
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "Here is how"`,
		`text_end 0 "Here is how"`,
		"error error",
	})
	if msg.StopReason != ai.StopError || msg.ErrorMessage != "Provider stopped with: SAFETY" || msg.RawStopReason != "SAFETY" {
		t.Errorf("got %s %q %s", msg.StopReason, msg.ErrorMessage, msg.RawStopReason)
	}
}

func TestPromptBlocked(t *testing.T) {
	srv := newServer(t, sseFile(t, "prompt_blocked.sse"))
	msg, _ := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	if msg.StopReason != ai.StopError || msg.ErrorMessage != "Prompt blocked: PROHIBITED_CONTENT" {
		t.Errorf("got %s %q", msg.StopReason, msg.ErrorMessage)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		status     int
		header     map[string]string
		message    string
		retryAfter time.Duration
	}{
		{400, nil, "API key not valid. Please pass a valid API key.", 0},
		{403, nil, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", 0},
		{429, nil, "You exceeded your current quota, please check your plan and billing details.", 37 * time.Second},
		{429, map[string]string{"Retry-After": "12"}, "You exceeded your current quota, please check your plan and billing details.", 12 * time.Second},
		{500, nil, "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", 0},
		{503, map[string]string{"Retry-After": "3"}, "The model is overloaded. Please try again later.", 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status, tc.header), func(t *testing.T) {
			srv := newServer(t, jsonError(t, tc.status, fmt.Sprintf("error_%d.json", tc.status), tc.header))
			msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
			checkLines(t, rec, []string{"start", "error error"})
			if msg.StopReason != ai.StopError || msg.ErrorStatus != tc.status || msg.RetryAfter != tc.retryAfter {
				t.Errorf("stop %s status %d retryAfter %v", msg.StopReason, msg.ErrorStatus, msg.RetryAfter)
			}
			if want := fmt.Sprintf("%d %s", tc.status, tc.message); msg.ErrorMessage != want {
				t.Errorf("message %q, want %q", msg.ErrorMessage, want)
			}
		})
	}
}

func TestPlainTextHTTPError(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream connect error or disconnect/reset before headers", http.StatusBadGateway)
	})
	msg, _ := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	if msg.ErrorStatus != 502 || msg.ErrorMessage != "502 upstream connect error or disconnect/reset before headers" {
		t.Errorf("got %d %q", msg.ErrorStatus, msg.ErrorMessage)
	}
}

func TestErrorInsideStream(t *testing.T) {
	srv := newServer(t, sseFile(t, "stream_error.sse"))
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "Partial"`,
		"error error",
	})
	if msg.ErrorStatus != 503 || msg.ErrorMessage != "503 The model is overloaded. Please try again later." {
		t.Errorf("got %d %q", msg.ErrorStatus, msg.ErrorMessage)
	}
	if msg.Content[0].Text != "Partial" {
		t.Errorf("partial text kept: %+v", msg.Content)
	}
}

// TestCutConnection: the server drops the TCP connection mid-event, before
// the chunked body ends.
func TestCutConnection(t *testing.T) {
	data := readTestdata(t, "cut.sse")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(data), data)
		buf.Flush()
	})
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "This answer never"`,
		"error error",
	})
	if msg.StopReason != ai.StopError || msg.ErrorStatus != 0 || !strings.HasPrefix(msg.ErrorMessage, "stream ended unexpectedly") {
		t.Errorf("got %s %d %q", msg.StopReason, msg.ErrorStatus, msg.ErrorMessage)
	}
	if msg.Content[0].Text != "This answer never" {
		t.Errorf("partial text kept: %+v", msg.Content)
	}
	if msg.ErrorMessage != "stream ended unexpectedly: unexpected EOF" {
		t.Errorf("message %q", msg.ErrorMessage)
	}
}

// TestEndWithoutFinish: the body ends cleanly but no finishReason came.
func TestEndWithoutFinish(t *testing.T) {
	data := readTestdata(t, "cut.sse")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(data)
	})
	msg, rec := run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	checkLines(t, rec, []string{
		"start",
		"text_start 0",
		`text_delta 0 "This answer never"`,
		`text_end 0 "This answer never"`,
		"error error",
	})
	if msg.StopReason != ai.StopError || msg.ErrorStatus != 0 || msg.ErrorMessage != "stream ended unexpectedly: the response has no finish reason" {
		t.Errorf("got %s %d %q", msg.StopReason, msg.ErrorStatus, msg.ErrorMessage)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	url := srv.URL
	srv.Close()
	rec := &recorder{}
	msg := New().Stream(context.Background(), simpleRequest(testModel(url, "gemini-2.5-flash")), rec.emit)
	checkFinal(t, rec, msg)
	want := "cannot connect to google at " + url + ": connection refused (is the server running?)"
	if msg.StopReason != ai.StopError || msg.ErrorStatus != 0 || msg.ErrorMessage != want {
		t.Errorf("got %s %d %q, want %q", msg.StopReason, msg.ErrorStatus, msg.ErrorMessage, want)
	}
}

// TestAbortSlowStream: the user aborts while Gemini is still streaming.
func TestAbortSlowStream(t *testing.T) {
	first := strings.SplitAfter(string(readTestdata(t, "text.sse")), "\r\n\r\n")[0]
	released := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(released)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
			t.Error("the client did not hang up")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	emit := func(ev ai.AssistantEvent) {
		rec.emit(ev)
		if ev.Type == ai.EvTextDelta {
			cancel()
		}
	}
	start := time.Now()
	msg := New().Stream(ctx, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")), emit)
	checkFinal(t, rec, msg)
	if time.Since(start) > 30*time.Second { // the server holds the stream for a minute
		t.Errorf("abort took %v", time.Since(start))
	}
	checkLines(t, rec, []string{"start", "text_start 0", `text_delta 0 "Hello"`, "error aborted"})
	if msg.StopReason != ai.StopAborted || msg.ErrorMessage != "Request was aborted" || msg.Content[0].Text != "Hello" {
		t.Errorf("got %s %q %+v", msg.StopReason, msg.ErrorMessage, msg.Content)
	}
	<-released
}

func TestAbortBeforeResponse(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rec := &recorder{}
	msg := New().Stream(ctx, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")), rec.emit)
	checkFinal(t, rec, msg)
	if msg.StopReason != ai.StopAborted {
		t.Errorf("got %s %q", msg.StopReason, msg.ErrorMessage)
	}
}

func TestHeadersAndNoKey(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	m := testModel(srv.URL+"/", "gemini-2.5-flash")
	m.Headers = map[string]string{"X-Proxy-Token": "abc"}
	req := simpleRequest(m)
	req.APIKey = ""
	run(t, srv, req)
	c := srv.last(t)
	if _, ok := c.Header["X-Goog-Api-Key"]; ok {
		t.Errorf("no key must send no x-goog-api-key")
	}
	if c.Header.Get("X-Proxy-Token") != "abc" {
		t.Errorf("model headers not sent: %v", c.Header)
	}
	if c.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" {
		t.Errorf("path %s", c.Path)
	}
}

// TestNoHiddenRetry: a 503 is reported after exactly one request.
func TestNoHiddenRetry(t *testing.T) {
	srv := newServer(t, jsonError(t, 503, "error_503.json", nil))
	run(t, srv, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")))
	srv.last(t) // fails unless there was exactly one request
}

func TestRequestBodyConversation(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	m := testModel(srv.URL, "gemini-3-flash-preview")
	img := ai.Image("iVBORw0KGgo=", "image/png")
	req := &ai.Request{
		Model:        m,
		SystemPrompt: "sys",
		APIKey:       "k",
		Messages: []ai.Message{
			&ai.UserMessage{Content: ai.BlockContent(ai.Text("look"), img)},
			&ai.AssistantMessage{
				Provider: "google", Model: "gemini-3-flash-preview", StopReason: ai.StopToolUse,
				Content: []ai.Content{
					{Type: ai.ContentThinking, Thinking: "hmm", ThinkingSignature: "c2lnMQ=="},
					{Type: ai.ContentText, Text: "Reading.", TextSignature: "c2lnMg=="},
					{Type: ai.ContentToolCall, ID: "read_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`), ThoughtSignature: "c2lnMw=="},
					{Type: ai.ContentToolCall, ID: "read_2", Name: "read", Arguments: json.RawMessage(`{"path":"b.go"}`)},
				},
			},
			&ai.ToolResultMessage{ToolCallID: "read_1", ToolName: "read", Content: []ai.Content{ai.Text("package a"), img}},
			&ai.ToolResultMessage{ToolCallID: "read_2", ToolName: "read", Content: []ai.Content{ai.Text("no such file")}, IsError: true},
			// A failed turn is not sent again.
			&ai.AssistantMessage{Provider: "google", Model: "gemini-3-flash-preview", StopReason: ai.StopError,
				Content: []ai.Content{ai.Text("half an ans")}},
			&ai.UserMessage{Content: ai.StringContent("go on")},
			// Another model's turn: thinking becomes text, signatures are dropped.
			&ai.AssistantMessage{
				Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: ai.StopToolUse,
				Content: []ai.Content{
					{Type: ai.ContentThinking, Thinking: "let me see", ThinkingSignature: "EqQBCkYIBxgCKkA="},
					{Type: ai.ContentThinking, Redacted: true, Thinking: "opaque"},
					{Type: ai.ContentToolCall, ID: "toolu_01", Name: "ls", Arguments: json.RawMessage(`{}`)},
				},
			},
			// ...and its tool call never got a result.
			&ai.UserMessage{Content: ai.StringContent("stop")},
		},
		ThinkingLevel: "minimal",
	}
	run(t, srv, req)
	c := srv.last(t)
	assertJSON(t, c.Body, `{
		"contents": [
			{"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
			{"role": "model", "parts": [
				{"text": "hmm", "thought": true, "thoughtSignature": "c2lnMQ=="},
				{"text": "Reading.", "thoughtSignature": "c2lnMg=="},
				{"functionCall": {"name": "read", "args": {"path": "a.go"}}, "thoughtSignature": "c2lnMw=="},
				{"functionCall": {"name": "read", "args": {"path": "b.go"}}, "thoughtSignature": "skip_thought_signature_validator"}
			]},
			{"role": "user", "parts": [
				{"functionResponse": {"name": "read", "response": {"output": "package a"},
					"parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}},
				{"functionResponse": {"name": "read", "response": {"error": "no such file"}}}
			]},
			{"role": "user", "parts": [{"text": "go on"}]},
			{"role": "model", "parts": [
				{"text": "let me see"},
				{"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"}
			]},
			{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"error": "No result provided"}}}]},
			{"role": "user", "parts": [{"text": "stop"}]}
		],
		"systemInstruction": {"parts": [{"text": "sys"}]},
		"generationConfig": {"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "MINIMAL"}}
	}`)
}

func TestRequestBodyOlderModel(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	m := testModel(srv.URL, "gemini-2.0-flash")
	m.Reasoning = false
	m.Input = []string{"text"}
	m.MaxTokens = 8192
	img := ai.Image("iVBORw0KGgo=", "image/png")
	req := &ai.Request{
		Model: m, APIKey: "k", ThinkingLevel: "high",
		Messages: []ai.Message{
			&ai.UserMessage{Content: ai.BlockContent(ai.Text("look"), img)},
			&ai.AssistantMessage{Provider: "google", Model: "gemini-2.0-flash", StopReason: ai.StopToolUse,
				Content: []ai.Content{{Type: ai.ContentToolCall, ID: "x", Name: "shot", Arguments: json.RawMessage(`{}`)}}},
			&ai.ToolResultMessage{ToolCallID: "x", ToolName: "shot", Content: []ai.Content{img}},
		},
	}
	run(t, srv, req)
	c := srv.last(t)
	// No image input: images are dropped; no reasoning: no thinkingConfig;
	// no system prompt: no systemInstruction; not Gemini 3: no placeholder signature.
	assertJSON(t, c.Body, `{
		"contents": [
			{"role": "user", "parts": [{"text": "look"}]},
			{"role": "model", "parts": [{"functionCall": {"name": "shot", "args": {}}}]},
			{"role": "user", "parts": [{"functionResponse": {"name": "shot", "response": {"output": ""}}}]}
		],
		"generationConfig": {"maxOutputTokens": 8192}
	}`)

	// With image input but before Gemini 3, tool result images follow in a user turn.
	m2 := testModel("", "gemini-2.5-flash")
	body := buildRequest(&ai.Request{Model: m2, Messages: req.Messages[1:]})
	assertJSON(t, normalize(body.Contents), `[
		{"role": "model", "parts": [{"functionCall": {"name": "shot", "args": {}}}]},
		{"role": "user", "parts": [{"functionResponse": {"name": "shot", "response": {"output": "(see attached image)"}}}]},
		{"role": "user", "parts": [{"text": "Tool result image:"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}
	]`)
}

func TestThinkingConfig(t *testing.T) {
	cases := []struct {
		id, level string
		budgets   map[string]int
		want      string
	}{
		{"gemini-3-pro-preview", "minimal", nil, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", "low", nil, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", "medium", nil, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3.1-pro-preview", "xhigh", nil, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3-pro-preview", "off", nil, `{"thinkingLevel":"LOW"}`},
		{"gemini-3-flash-preview", "minimal", nil, `{"includeThoughts":true,"thinkingLevel":"MINIMAL"}`},
		{"gemini-3-flash-preview", "low", nil, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-flash-preview", "medium", nil, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-3-flash-preview", "high", nil, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3-flash-preview", "off", nil, `{"thinkingLevel":"MINIMAL"}`},
		{"gemini-flash-latest", "medium", nil, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-2.5-pro", "minimal", nil, `{"includeThoughts":true,"thinkingBudget":128}`},
		{"gemini-2.5-pro", "low", nil, `{"includeThoughts":true,"thinkingBudget":2048}`},
		{"gemini-2.5-pro", "medium", nil, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-pro", "high", nil, `{"includeThoughts":true,"thinkingBudget":32768}`},
		{"gemini-2.5-pro", "off", nil, `{"thinkingBudget":128}`},
		{"gemini-2.5-flash", "minimal", nil, `{"includeThoughts":true,"thinkingBudget":128}`},
		{"gemini-2.5-flash", "low", nil, `{"includeThoughts":true,"thinkingBudget":2048}`},
		{"gemini-2.5-flash", "medium", nil, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-flash-lite", "high", nil, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{"gemini-2.5-flash", "off", nil, `{"thinkingBudget":0}`},
		{"gemini-2.5-flash", "", nil, `{"thinkingBudget":0}`},
		{"gemini-2.5-flash", "low", map[string]int{"low": 1000}, `{"includeThoughts":true,"thinkingBudget":1000}`},
		{"gemma-custom", "high", nil, `{"includeThoughts":true,"thinkingBudget":-1}`},
	}
	for _, tc := range cases {
		m := testModel("", tc.id)
		got, _ := json.Marshal(thinkingFor(m, tc.level, tc.budgets))
		if string(got) != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.id, tc.level, got, tc.want)
		}
	}
	m := testModel("", "gemini-2.5-flash")
	m.Reasoning = false
	if c := thinkingFor(m, "high", nil); c != nil {
		t.Errorf("a model without reasoning gets no thinkingConfig: %+v", c)
	}
}

func TestEndpoint(t *testing.T) {
	cases := map[string]string{
		"": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"https://generativelanguage.googleapis.com/v1beta":  "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"https://generativelanguage.googleapis.com/v1beta/": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"https://generativelanguage.googleapis.com/v1alpha": "https://generativelanguage.googleapis.com/v1alpha/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"http://127.0.0.1:8080/proxy/google":                "http://127.0.0.1:8080/proxy/google/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"https://generativelanguage.googleapis.com/v1":      "https://generativelanguage.googleapis.com/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
	}
	for base, want := range cases {
		if got := endpoint(&ai.Model{ID: "gemini-2.5-flash", BaseURL: base}); got != want {
			t.Errorf("%q: %s, want %s", base, got, want)
		}
	}
}

// TestSnapshotsDuringStream: a snapshot taken at a delta holds the text so far.
func TestSnapshotsDuringStream(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	var texts []string
	emit := func(ev ai.AssistantEvent) {
		if ev.Type == ai.EvTextDelta {
			texts = append(texts, ev.Snapshot().Content[0].Text)
		}
	}
	New().Stream(context.Background(), simpleRequest(testModel(srv.URL, "gemini-2.5-flash")), emit)
	if !reflect.DeepEqual(texts, []string{"Hello", "Hello, world", "Hello, world!"}) {
		t.Errorf("snapshots %q", texts)
	}
}

// The testdata streams are well-formed SSE: every event a data line of JSON.
func TestTestdataWellFormed(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, f := range files {
		if strings.HasSuffix(f, "cut.sse") {
			continue
		}
		b, _ := os.ReadFile(f)
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if line == "" {
				continue
			}
			v, ok := strings.CutPrefix(line, "data: ")
			if !ok || !json.Valid([]byte(v)) {
				t.Errorf("%s: bad line %q", f, line)
			}
		}
	}
}

// TestAbortWithBufferedEvents: events already received are not emitted
// after the abort.
func TestAbortWithBufferedEvents(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(readTestdata(t, "text.sse"))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	emit := func(ev ai.AssistantEvent) {
		rec.emit(ev)
		if ev.Type == ai.EvTextDelta {
			cancel()
		}
	}
	msg := New().Stream(ctx, simpleRequest(testModel(srv.URL, "gemini-2.5-flash")), emit)
	checkFinal(t, rec, msg)
	checkLines(t, rec, []string{"start", "text_start 0", `text_delta 0 "Hello"`, "error aborted"})
}
