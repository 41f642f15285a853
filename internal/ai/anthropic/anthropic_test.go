package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// capture records the requests a test server received.
type capture struct {
	mu   sync.Mutex
	reqs []captured
}

type captured struct {
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

func (c *capture) add(r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	c.mu.Lock()
	c.reqs = append(c.reqs, captured{r.URL.Path, r.Header.Clone(), raw, body})
	c.mu.Unlock()
}

func (c *capture) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

func (c *capture) last(t *testing.T) captured {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return c.reqs[len(c.reqs)-1]
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeSSE sends an SSE byte stream event by event, flushing after each, as
// the API does.
func writeSSE(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_test")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	for len(data) > 0 {
		i := bytes.Index(data, []byte("\n\n"))
		n := len(data)
		if i >= 0 {
			n = i + 2
		}
		_, _ = w.Write(data[:n])
		f.Flush()
		data = data[n:]
	}
}

// server starts a test server whose handler runs after the request is
// recorded.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *capture) {
	t.Helper()
	c := &capture{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// sseServer answers every request with a testdata stream.
func sseServer(t *testing.T, file string) (*httptest.Server, *capture) {
	data := readTestdata(t, file)
	return server(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, data) })
}

func testModel(baseURL string) *ai.Model {
	return &ai.Model{
		ID:            "claude-sonnet-4-5-20250929",
		Name:          "Claude Sonnet 4.5",
		API:           API,
		Provider:      "anthropic",
		BaseURL:       baseURL,
		Reasoning:     true,
		Input:         []string{"text", "image"},
		Cost:          ai.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		ContextWindow: 200000,
		MaxTokens:     64000,
	}
}

func userText(s string) *ai.UserMessage {
	return &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(s), Timestamp: 1}
}

func simpleRequest(baseURL string) *ai.Request {
	return &ai.Request{
		Model:         testModel(baseURL),
		SystemPrompt:  "You are a helpful coding agent.",
		Messages:      []ai.Message{userText("Say hello")},
		ThinkingLevel: "off",
		APIKey:        "sk-ant-api03-test",
	}
}

// run streams req through a fresh provider and returns the final message and
// every event emitted.
func run(t *testing.T, ctx context.Context, req *ai.Request) (*ai.AssistantMessage, []ai.AssistantEvent) {
	t.Helper()
	var evs []ai.AssistantEvent
	p := New()
	m := p.Stream(ctx, req, func(ev ai.AssistantEvent) { evs = append(evs, ev) })
	if m == nil {
		t.Fatal("Stream returned nil")
	}
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	last := evs[len(evs)-1]
	if last.Message != m {
		t.Errorf("the last event does not carry the returned message")
	}
	return m, evs
}

// seq renders events compactly: "type index delta/content".
func seq(evs []ai.AssistantEvent) []string {
	var out []string
	for _, e := range evs {
		var s string
		switch e.Type {
		case ai.EvStart:
			s = e.Type
		case ai.EvTextStart, ai.EvThinkingStart:
			s = fmt.Sprintf("%s %d", e.Type, e.ContentIndex)
		case ai.EvToolCallStart:
			s = fmt.Sprintf("%s %d %s %s", e.Type, e.ContentIndex, e.ID, e.ToolName)
		case ai.EvTextDelta, ai.EvThinkingDelta, ai.EvToolCallDelta:
			s = fmt.Sprintf("%s %d %s", e.Type, e.ContentIndex, e.Delta)
		case ai.EvTextEnd, ai.EvThinkingEnd:
			s = fmt.Sprintf("%s %d %s", e.Type, e.ContentIndex, e.Content)
		case ai.EvToolCallEnd:
			s = fmt.Sprintf("%s %d %s", e.Type, e.ContentIndex, e.ToolCall.Arguments)
		default:
			s = e.Type + " " + e.Reason
		}
		out = append(out, s)
	}
	return out
}

func assertSeq(t *testing.T, evs []ai.AssistantEvent, want []string) {
	t.Helper()
	got := seq(evs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got  %q\n want %q", got, want)
	}
}

// jsonEq compares a decoded body member with the JSON text want.
func jsonEq(t *testing.T, name string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want JSON: %v", name, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s:\n got  %s\n want %s", name, g, want)
	}
}

func TestText(t *testing.T) {
	// The SDK's environment defaults must not leak into requests.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")

	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL)
	req.Tools = []ai.ToolSpec{{
		Name:        "read",
		Description: "Read a file",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path"}},"required":["path"],"additionalProperties":false}`),
	}}
	m, evs := run(t, context.Background(), req)

	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 Hello",
		"text_delta 0 , world!",
		"text_end 0 Hello, world!",
		"done stop",
	})
	if m.StopReason != ai.StopStop || m.RawStopReason != "end_turn" {
		t.Errorf("stop = %q raw %q", m.StopReason, m.RawStopReason)
	}
	if len(m.Content) != 1 || m.Content[0].Type != ai.ContentText || m.Content[0].Text != "Hello, world!" {
		t.Errorf("content = %+v", m.Content)
	}
	if m.ResponseID != "msg_01XFDUDYJgAACzvnptvVoYEL" {
		t.Errorf("responseId = %q", m.ResponseID)
	}
	if m.API != API || m.Provider != "anthropic" || m.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("identity = %q %q %q", m.API, m.Provider, m.Model)
	}
	if m.Usage.Input != 25 || m.Usage.Output != 15 || m.Usage.TotalTokens != 40 {
		t.Errorf("usage = %+v", m.Usage)
	}
	if m.DurationMs == nil {
		t.Error("no durationMs")
	}
	if m.ThinkingLevel != "" {
		t.Errorf("thinkingLevel = %q", m.ThinkingLevel)
	}

	r := c.last(t)
	if c.count() != 1 {
		t.Errorf("%d requests", c.count())
	}
	if r.Path != "/v1/messages" {
		t.Errorf("path = %q", r.Path)
	}
	if got := r.Header.Get("x-api-key"); got != "sk-ant-api03-test" {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("authorization = %q", got)
	}
	if got := r.Header.Get("anthropic-beta"); got != "" {
		t.Errorf("anthropic-beta = %q", got)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("content-type = %q", r.Header.Get("Content-Type"))
	}
	b := r.Body
	jsonEq(t, "model", b["model"], `"claude-sonnet-4-5-20250929"`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "max_tokens", b["max_tokens"], `32000`)
	jsonEq(t, "system", b["system"], `[{"type":"text","text":"You are a helpful coding agent.","cache_control":{"type":"ephemeral"}}]`)
	jsonEq(t, "messages", b["messages"], `[{"role":"user","content":[{"type":"text","text":"Say hello","cache_control":{"type":"ephemeral"}}]}]`)
	jsonEq(t, "tools", b["tools"], `[{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"File path"}},"required":["path"],"additionalProperties":false}}]`)
	for _, k := range []string{"thinking", "output_config", "temperature"} {
		if _, ok := b[k]; ok {
			t.Errorf("%s sent: %v", k, b[k])
		}
	}
}

func TestRequestMessages(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL)
	model := req.Model
	own := func(content ...ai.Content) *ai.AssistantMessage {
		return &ai.AssistantMessage{Role: ai.RoleAssistant, Content: content, API: API, Provider: "anthropic",
			Model: model.ID, StopReason: ai.StopToolUse}
	}
	call := func(id, name, args string) ai.Content {
		return ai.Content{Type: ai.ContentToolCall, ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	result := func(id string, isErr bool, content ...ai.Content) *ai.ToolResultMessage {
		return &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: id, ToolName: "x", Content: content, IsError: isErr}
	}
	other := &ai.AssistantMessage{Role: ai.RoleAssistant, API: "openai-responses", Provider: "openai", Model: "gpt-5",
		StopReason: ai.StopToolUse, Content: []ai.Content{
			{Type: ai.ContentThinking, Thinking: "their reasoning", ThinkingSignature: "rs_opaque"},
			call("call_1|fc_1", "bash", `{"command":"pwd"}`),
		}}
	failed := &ai.AssistantMessage{Role: ai.RoleAssistant, API: API, Provider: "anthropic", Model: model.ID,
		StopReason: ai.StopError, ErrorMessage: "529 Overloaded", Content: []ai.Content{ai.Text("half an ans")}}

	req.Messages = []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is in this image?"), ai.Image("iVBORw0KGgo=", "image/png"), ai.Text("  "))},
		own(
			ai.Content{Type: ai.ContentThinking, Thinking: "Looking at it.", ThinkingSignature: "sig-1"},
			ai.Content{Type: ai.ContentThinking, Thinking: "[Reasoning redacted]", ThinkingSignature: "opaque-data", Redacted: true},
			ai.Content{Type: ai.ContentThinking, Thinking: "unsigned thoughts"},
			ai.Text("I will read two files."),
			ai.Text(""),
			call("toolu_01", "read", `{"path":"a.go"}`),
			call("toolu_02", "read", `{"path":"b.png"}`),
		),
		result("toolu_01", false, ai.Text("package a")),
		result("toolu_02", true, ai.Image("R0lGODlh", "image/gif")),
		result("toolu_02", false, ai.Text("a second answer")), // answered already
		failed,
		result("toolu_99", false, ai.Text("answers a dropped call")),
		userText("Now run pwd"),
		other,
		// no result for call_1|fc_1: the conversation moved on
		own(call("toolu_03", "ls", `{}`)),
		result("toolu_03", false, ai.Text("a.go\nb.png")),
	}
	run(t, context.Background(), req)

	jsonEq(t, "messages", c.last(t).Body["messages"], `[
	 {"role":"user","content":[
	   {"type":"text","text":"What is in this image?"},
	   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
	 {"role":"assistant","content":[
	   {"type":"thinking","thinking":"Looking at it.","signature":"sig-1"},
	   {"type":"redacted_thinking","data":"opaque-data"},
	   {"type":"text","text":"unsigned thoughts"},
	   {"type":"text","text":"I will read two files."},
	   {"type":"tool_use","id":"toolu_01","name":"read","input":{"path":"a.go"}},
	   {"type":"tool_use","id":"toolu_02","name":"read","input":{"path":"b.png"}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"package a"}]},
	   {"type":"tool_result","tool_use_id":"toolu_02","is_error":true,"content":[
	     {"type":"text","text":"(see attached image)"},
	     {"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGODlh"}}]}]},
	 {"role":"user","content":[{"type":"text","text":"Now run pwd"}]},
	 {"role":"assistant","content":[
	   {"type":"text","text":"their reasoning"},
	   {"type":"tool_use","id":"call_1_fc_1","name":"bash","input":{"command":"pwd"}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"call_1_fc_1","is_error":true,"content":[{"type":"text","text":"No result provided"}]}]},
	 {"role":"assistant","content":[{"type":"tool_use","id":"toolu_03","name":"ls","input":{}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"toolu_03","content":[{"type":"text","text":"a.go\nb.png"}],"cache_control":{"type":"ephemeral"}}]}
	]`)
}

func TestImagesDroppedForTextOnlyModel(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL)
	req.Model.Input = []string{"text"}
	req.Messages = []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("look"), ai.Image("iVBORw0KGgo=", "image/png"))}}
	run(t, context.Background(), req)
	jsonEq(t, "messages", c.last(t).Body["messages"],
		`[{"role":"user","content":[{"type":"text","text":"look","cache_control":{"type":"ephemeral"}}]}]`)
}

func TestThinkingRequest(t *testing.T) {
	cases := []struct {
		name      string
		model     string
		reasoning bool
		modelMax  int
		level     string
		maxTokens int
		budgets   map[string]int
		thinking  string // JSON, "" = absent
		output    string // JSON, "" = absent
		wantMax   float64
		beta      string
	}{
		{name: "budget medium", model: "claude-sonnet-4-5-20250929", reasoning: true, modelMax: 64000, level: "medium",
			thinking: `{"type":"enabled","budget_tokens":8192}`, wantMax: 40192, beta: betaInterleavedThinking},
		{name: "budget minimal", model: "claude-sonnet-4-5", reasoning: true, modelMax: 64000, level: "minimal",
			thinking: `{"type":"enabled","budget_tokens":1024}`, wantMax: 33024, beta: betaInterleavedThinking},
		{name: "budget xhigh clamps to high", model: "claude-3-7-sonnet-20250219", reasoning: true, modelMax: 64000, level: "xhigh",
			thinking: `{"type":"enabled","budget_tokens":16384}`, wantMax: 48384, beta: betaInterleavedThinking},
		{name: "budget override", model: "claude-opus-4-1-20250805", reasoning: true, modelMax: 32000, level: "low",
			budgets: map[string]int{"low": 4000}, thinking: `{"type":"enabled","budget_tokens":4000}`, wantMax: 32000, beta: betaInterleavedThinking},
		{name: "budget capped by model max", model: "claude-haiku-4-5", reasoning: true, modelMax: 8192, level: "high",
			thinking: `{"type":"enabled","budget_tokens":7168}`, wantMax: 8192, beta: betaInterleavedThinking},
		{name: "budget with request max tokens", model: "claude-sonnet-4-5", reasoning: true, modelMax: 64000, level: "low", maxTokens: 4096,
			thinking: `{"type":"enabled","budget_tokens":2048}`, wantMax: 6144, beta: betaInterleavedThinking},
		{name: "adaptive high", model: "claude-opus-4-6", reasoning: true, modelMax: 128000, level: "high",
			thinking: `{"type":"adaptive","display":"summarized"}`, output: `{"effort":"high"}`, wantMax: 32000},
		{name: "adaptive xhigh on opus", model: "claude-opus-4-6", reasoning: true, modelMax: 128000, level: "xhigh",
			thinking: `{"type":"adaptive","display":"summarized"}`, output: `{"effort":"max"}`, wantMax: 32000},
		{name: "adaptive xhigh on sonnet", model: "claude-sonnet-4-6", reasoning: true, modelMax: 64000, level: "xhigh",
			thinking: `{"type":"adaptive","display":"summarized"}`, output: `{"effort":"high"}`, wantMax: 32000},
		{name: "adaptive minimal", model: "claude-sonnet-4-6", reasoning: true, modelMax: 64000, level: "minimal",
			thinking: `{"type":"adaptive","display":"summarized"}`, output: `{"effort":"low"}`, wantMax: 32000},
		{name: "adaptive medium, dotted id", model: "anthropic/claude-opus-4.7", reasoning: true, modelMax: 128000, level: "medium",
			thinking: `{"type":"adaptive","display":"summarized"}`, output: `{"effort":"medium"}`, wantMax: 32000},
		{name: "off", model: "claude-sonnet-4-5", reasoning: true, modelMax: 64000, level: "off", wantMax: 32000},
		{name: "not a reasoning model", model: "claude-3-5-haiku-latest", reasoning: false, modelMax: 8192, level: "high", wantMax: 8192},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := sseServer(t, "text.sse")
			req := simpleRequest(srv.URL)
			req.Model.ID = tc.model
			req.Model.Reasoning = tc.reasoning
			req.Model.MaxTokens = tc.modelMax
			req.ThinkingLevel = tc.level
			req.MaxTokens = tc.maxTokens
			req.ThinkingBudgets = tc.budgets
			m, _ := run(t, context.Background(), req)
			r := c.last(t)
			if tc.thinking == "" {
				if v, ok := r.Body["thinking"]; ok {
					t.Errorf("thinking sent: %v", v)
				}
			} else {
				jsonEq(t, "thinking", r.Body["thinking"], tc.thinking)
			}
			if tc.output == "" {
				if v, ok := r.Body["output_config"]; ok {
					t.Errorf("output_config sent: %v", v)
				}
			} else {
				jsonEq(t, "output_config", r.Body["output_config"], tc.output)
			}
			if got := r.Body["max_tokens"]; got != tc.wantMax {
				t.Errorf("max_tokens = %v, want %v", got, tc.wantMax)
			}
			if got := r.Header.Get("anthropic-beta"); got != tc.beta {
				t.Errorf("anthropic-beta = %q, want %q", got, tc.beta)
			}
			wantLevel := tc.level
			if !tc.reasoning || tc.level == "off" {
				wantLevel = ""
			}
			if m.ThinkingLevel != wantLevel {
				t.Errorf("message thinkingLevel = %q, want %q", m.ThinkingLevel, wantLevel)
			}
		})
	}
}

func TestThinkingStream(t *testing.T) {
	srv, _ := sseServer(t, "thinking.sse")
	req := simpleRequest(srv.URL)
	req.ThinkingLevel = "medium"
	m, evs := run(t, context.Background(), req)
	assertSeq(t, evs, []string{
		"start",
		"thinking_start 0",
		"thinking_delta 0 Let me work out 27 * 453.",
		"thinking_delta 0 \n27 * 453 = 12231.",
		"thinking_end 0 Let me work out 27 * 453.\n27 * 453 = 12231.",
		"thinking_start 1",
		"thinking_delta 1 [Reasoning redacted]",
		"thinking_end 1 [Reasoning redacted]",
		"text_start 2",
		"text_delta 2 27 * 453 = 12,231",
		"text_end 2 27 * 453 = 12,231",
		"done stop",
	})
	want := []ai.Content{
		{Type: ai.ContentThinking, Thinking: "Let me work out 27 * 453.\n27 * 453 = 12231.", ThinkingSignature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		{Type: ai.ContentThinking, Thinking: "[Reasoning redacted]", ThinkingSignature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP", Redacted: true},
		{Type: ai.ContentText, Text: "27 * 453 = 12,231"},
	}
	if !reflect.DeepEqual(m.Content, want) {
		t.Errorf("content:\n got  %+v\n want %+v", m.Content, want)
	}
	if m.ThinkingLevel != "medium" {
		t.Errorf("thinkingLevel = %q", m.ThinkingLevel)
	}

	// The message goes back to the API with its signatures.
	srv2, c2 := sseServer(t, "text.sse")
	req2 := simpleRequest(srv2.URL)
	req2.Messages = []ai.Message{userText("27 * 453?"), m, userText("thanks")}
	run(t, context.Background(), req2)
	jsonEq(t, "messages", c2.last(t).Body["messages"], `[
	 {"role":"user","content":[{"type":"text","text":"27 * 453?"}]},
	 {"role":"assistant","content":[
	   {"type":"thinking","thinking":"Let me work out 27 * 453.\n27 * 453 = 12231.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
	   {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
	   {"type":"text","text":"27 * 453 = 12,231"}]},
	 {"role":"user","content":[{"type":"text","text":"thanks","cache_control":{"type":"ephemeral"}}]}]`)
}

func TestToolCall(t *testing.T) {
	srv, _ := sseServer(t, "tool_use.sse")
	m, evs := run(t, context.Background(), simpleRequest(srv.URL))
	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 Okay, let's check the weather for San Francisco, CA:",
		"text_end 0 Okay, let's check the weather for San Francisco, CA:",
		"toolcall_start 1 toolu_01T1x1fJ34qAmk2tNTrN7Up6 get_weather",
		`toolcall_delta 1 {"location":`,
		`toolcall_delta 1  "San Fra`,
		`toolcall_delta 1 ncisco, CA", "unit": "fah`,
		`toolcall_delta 1 renheit"}`,
		`toolcall_end 1 {"location":"San Francisco, CA","unit":"fahrenheit"}`,
		"done toolUse",
	})
	if m.StopReason != ai.StopToolUse || m.RawStopReason != "tool_use" {
		t.Errorf("stop = %q raw %q", m.StopReason, m.RawStopReason)
	}
	calls := m.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || calls[0].Name != "get_weather" ||
		string(calls[0].Arguments) != `{"location":"San Francisco, CA","unit":"fahrenheit"}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

func TestSeveralToolCalls(t *testing.T) {
	srv, _ := sseServer(t, "tool_use_multi.sse")
	req := simpleRequest(srv.URL)
	req.Model.ID = "claude-opus-4-6"
	m, evs := run(t, context.Background(), req)
	assertSeq(t, evs, []string{
		"start",
		"toolcall_start 0 toolu_01A read",
		`toolcall_delta 0 {"path": "go.mod"}`,
		`toolcall_end 0 {"path":"go.mod"}`,
		"toolcall_start 1 toolu_01B bash",
		`toolcall_delta 1 {"command": "ls`,
		`toolcall_delta 1  -la", "timeout": 30}`,
		`toolcall_end 1 {"command":"ls -la","timeout":30}`,
		"toolcall_start 2 toolu_01C ls",
		`toolcall_end 2 {}`,
		"done toolUse",
	})
	calls := m.ToolCalls()
	if len(calls) != 3 {
		t.Fatalf("%d tool calls", len(calls))
	}
	for i, want := range []string{`{"path":"go.mod"}`, `{"command":"ls -la","timeout":30}`, `{}`} {
		if string(calls[i].Arguments) != want || calls[i].ArgumentsError != "" {
			t.Errorf("call %d arguments = %s (%s)", i, calls[i].Arguments, calls[i].ArgumentsError)
		}
	}
}

func TestUsageAndCost(t *testing.T) {
	srv, _ := sseServer(t, "usage.sse")
	m, evs := run(t, context.Background(), simpleRequest(srv.URL))
	u := m.Usage
	if u.Input != 12 || u.Output != 1000 || u.CacheRead != 30000 || u.CacheWrite != 2000 || u.TotalTokens != 33012 {
		t.Errorf("usage = %+v", u)
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("cost %s = %v, want %v", name, got, want)
		}
	}
	near("input", u.Cost.Input, 12*3/1e6)
	near("output", u.Cost.Output, 1000*15/1e6)
	near("cacheRead", u.Cost.CacheRead, 30000*0.3/1e6)
	near("cacheWrite", u.Cost.CacheWrite, 2000*3.75/1e6)
	near("total", u.Cost.Total, (12*3+1000*15+30000*0.3+2000*3.75)/1e6)
	// The usage as it stood at the first text event: message_start's counts.
	for _, e := range evs {
		if e.Type == ai.EvTextStart {
			if e.Usage.Input != 12 || e.Usage.Output != 1 || e.Usage.CacheRead != 30000 || e.Usage.CacheWrite != 2000 {
				t.Errorf("usage at text_start = %+v", e.Usage)
			}
		}
	}
	if m.StopReason != ai.StopLength || m.RawStopReason != "max_tokens" {
		t.Errorf("stop = %q raw %q", m.StopReason, m.RawStopReason)
	}
}

func TestHTTPErrors(t *testing.T) {
	date := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	old := nowFunc
	nowFunc = func() time.Time { return date }
	t.Cleanup(func() { nowFunc = old })

	cases := []struct {
		status     int
		body       string
		header     map[string]string
		wantMsg    string
		wantStatus int
		wantRetry  time.Duration
	}{
		{status: 400, body: "error_400.json", wantMsg: "400 prompt is too long: 210183 tokens > 200000 maximum"},
		{status: 401, body: "error_401.json", wantMsg: "401 invalid x-api-key"},
		{status: 429, body: "error_429.json", header: map[string]string{"retry-after": "7"},
			wantMsg: "429 This request would exceed the rate limit for your organization of 50 requests per minute.", wantRetry: 7 * time.Second},
		{status: 429, body: "error_429.json", header: map[string]string{"retry-after-ms": "1500", "retry-after": "2"},
			wantMsg: "429 This request would exceed the rate limit for your organization of 50 requests per minute.", wantRetry: 1500 * time.Millisecond},
		{status: 500, body: "error_500.json", wantMsg: "500 Internal server error"},
		{status: 529, body: "error_529.json", header: map[string]string{"retry-after": date.Add(30 * time.Second).Format(http.TimeFormat)},
			wantMsg: "529 Overloaded", wantRetry: 30 * time.Second},
		{status: 502, body: "", wantMsg: "502 <html>bad gateway</html>"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d%v", tc.status, tc.header), func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = readTestdata(t, tc.body)
			} else {
				body = []byte("<html>bad gateway</html>")
			}
			srv, c := server(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				if tc.body != "" {
					w.Header().Set("Content-Type", "application/json")
				}
				w.Header().Set("x-should-retry", "true")
				w.WriteHeader(tc.status)
				_, _ = w.Write(body)
			})
			m, evs := run(t, context.Background(), simpleRequest(srv.URL))
			assertSeq(t, evs, []string{"start", "error error"})
			if c.count() != 1 {
				t.Errorf("%d requests: the SDK retried", c.count())
			}
			if m.StopReason != ai.StopError || m.ErrorMessage != tc.wantMsg {
				t.Errorf("stop %q message %q, want %q", m.StopReason, m.ErrorMessage, tc.wantMsg)
			}
			if m.ErrorStatus != tc.status || m.RetryAfter != tc.wantRetry {
				t.Errorf("status %d retryAfter %v, want %d %v", m.ErrorStatus, m.RetryAfter, tc.status, tc.wantRetry)
			}
		})
	}
}

func TestErrorEventInStream(t *testing.T) {
	srv, _ := sseServer(t, "error_event.sse")
	m, evs := run(t, context.Background(), simpleRequest(srv.URL))
	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 Partial",
		"error error",
	})
	if m.StopReason != ai.StopError || m.ErrorStatus != 529 || m.ErrorMessage != "529 Overloaded" {
		t.Errorf("stop %q status %d message %q", m.StopReason, m.ErrorStatus, m.ErrorMessage)
	}
	if len(m.Content) != 1 || m.Content[0].Text != "Partial" {
		t.Errorf("content = %+v", m.Content)
	}
}

func TestConnectionCut(t *testing.T) {
	data := readTestdata(t, "cut.sse")
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, data)
		// Drop the connection without ending the chunked body.
		panic(http.ErrAbortHandler)
	})
	m, evs := run(t, context.Background(), simpleRequest(srv.URL))
	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 The answer is",
		"error error",
	})
	if m.StopReason != ai.StopError || m.ErrorStatus != 0 || !strings.HasPrefix(m.ErrorMessage, "stream ended unexpectedly: ") {
		t.Errorf("stop %q status %d message %q", m.StopReason, m.ErrorStatus, m.ErrorMessage)
	}
	if m.Content[0].Text != "The answer is" {
		t.Errorf("partial text = %q", m.Content[0].Text)
	}
}

func TestStreamEndsWithoutStop(t *testing.T) {
	data := readTestdata(t, "cut.sse")
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, data) // a clean end of body, but no message_stop
	})
	m, _ := run(t, context.Background(), simpleRequest(srv.URL))
	if m.StopReason != ai.StopError || m.ErrorStatus != 0 || !strings.HasPrefix(m.ErrorMessage, "stream ended unexpectedly: ") {
		t.Errorf("stop %q status %d message %q", m.StopReason, m.ErrorStatus, m.ErrorMessage)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, evs := run(t, context.Background(), simpleRequest(url))
	assertSeq(t, evs, []string{"start", "error error"})
	want := "cannot connect to anthropic at " + url + ": connection refused (is the server running?)"
	if m.StopReason != ai.StopError || m.ErrorStatus != 0 || m.ErrorMessage != want {
		t.Errorf("stop %q status %d message %q, want %q", m.StopReason, m.ErrorStatus, m.ErrorMessage, want)
	}
}

func TestInvalidBaseURL(t *testing.T) {
	m, evs := run(t, context.Background(), simpleRequest("127.0.0.1:8080"))
	assertSeq(t, evs, []string{"start", "error error"})
	if m.ErrorStatus != 0 || !strings.Contains(m.ErrorMessage, "invalid base URL") {
		t.Errorf("status %d message %q", m.ErrorStatus, m.ErrorMessage)
	}
}

func TestAbortMidStream(t *testing.T) {
	head := readTestdata(t, "cut.sse")
	head = head[:bytes.LastIndex(head, []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de"))]
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, head)
		select { // a slow stream: nothing more until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var evs []ai.AssistantEvent
	start := time.Now()
	m := New().Stream(ctx, simpleRequest(srv.URL), func(ev ai.AssistantEvent) {
		evs = append(evs, ev)
		if ev.Type == ai.EvTextDelta {
			cancel()
		}
	})
	if d := time.Since(start); d > 30*time.Second { // the server holds the stream until the test ends
		t.Errorf("abort took %v", d)
	}
	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 The answer is",
		"error aborted",
	})
	if m.StopReason != ai.StopAborted || m.ErrorMessage != "Request was aborted" {
		t.Errorf("stop %q message %q", m.StopReason, m.ErrorMessage)
	}
	if m.Content[0].Text != "The answer is" {
		t.Errorf("partial text = %q", m.Content[0].Text)
	}
}

func TestAbortBeforeResponse(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	m, evs := run(t, ctx, simpleRequest(srv.URL))
	assertSeq(t, evs, []string{"start", "error aborted"})
	if m.StopReason != ai.StopAborted {
		t.Errorf("stop %q message %q", m.StopReason, m.ErrorMessage)
	}
}

func TestRefusal(t *testing.T) {
	srv, _ := sseServer(t, "refusal.sse")
	m, evs := run(t, context.Background(), simpleRequest(srv.URL))
	assertSeq(t, evs, []string{
		"start",
		"text_start 0",
		"text_delta 0 I can't",
		"text_end 0 I can't",
		"error error",
	})
	if m.StopReason != ai.StopError || m.RawStopReason != "refusal" || !strings.Contains(m.ErrorMessage, "refus") {
		t.Errorf("stop %q raw %q message %q", m.StopReason, m.RawStopReason, m.ErrorMessage)
	}
	if m.Usage.Output != 4 {
		t.Errorf("usage = %+v", m.Usage)
	}
}

func TestOAuthToken(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL)
	req.APIKey = "sk-ant-oat01-abcdef"
	run(t, context.Background(), req)
	r := c.last(t)
	if got := r.Header.Get("Authorization"); got != "Bearer sk-ant-oat01-abcdef" {
		t.Errorf("authorization = %q", got)
	}
	if got := r.Header.Get("x-api-key"); got != "" {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("anthropic-beta"); !strings.Contains(got, betaOAuth) {
		t.Errorf("anthropic-beta = %q", got)
	}
	jsonEq(t, "system", r.Body["system"], `[
	 {"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},
	 {"type":"text","text":"You are a helpful coding agent.","cache_control":{"type":"ephemeral"}}]`)
}

func TestBaseURLAndModelHeaders(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL + "/anthropic")
	req.Model.Headers = map[string]string{"X-Gateway-Key": "gw-1", "anthropic-beta": "context-1m-2025-08-07"}
	req.ThinkingLevel = "low"
	req.SystemPrompt = ""
	run(t, context.Background(), req)
	r := c.last(t)
	if r.Path != "/anthropic/v1/messages" {
		t.Errorf("path = %q", r.Path)
	}
	if got := r.Header.Get("X-Gateway-Key"); got != "gw-1" {
		t.Errorf("model header = %q", got)
	}
	if got := r.Header.Get("anthropic-beta"); got != betaInterleavedThinking+",context-1m-2025-08-07" {
		t.Errorf("anthropic-beta = %q", got)
	}
	if _, ok := r.Body["system"]; ok {
		t.Errorf("system sent without a system prompt: %v", r.Body["system"])
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(time.Minute).Format(http.TimeFormat)}, time.Minute},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"retry-after-ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"retry-after-ms": "x", "Retry-After": "4"}, 4 * time.Second},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestClaudeVersion(t *testing.T) {
	cases := []struct {
		id       string
		family   string
		maj, min int
		adaptive bool
	}{
		{"claude-opus-4-6", "opus", 4, 6, true},
		{"claude-sonnet-4-6", "sonnet", 4, 6, true},
		{"claude-sonnet-4-5-20250929", "sonnet", 4, 5, false},
		{"claude-sonnet-4-20250514", "sonnet", 4, 0, false},
		{"claude-3-7-sonnet-20250219", "sonnet", 3, 7, false},
		{"claude-opus-4-1-20250805", "opus", 4, 1, false},
		{"anthropic/claude-opus-4.6", "opus", 4, 6, true},
		{"claude-opus-5", "opus", 5, 0, true},
		{"claude-haiku-4-5", "haiku", 4, 5, false},
		{"claude-mythos-preview", "mythos", 0, 0, true},
		{"some-local-model", "", 0, 0, false},
	}
	for _, tc := range cases {
		f, maj, mn := claudeVersion(tc.id)
		if f != tc.family || maj != tc.maj || mn != tc.min {
			t.Errorf("%s: %s %d.%d", tc.id, f, maj, mn)
		}
		if got := supportsAdaptive(tc.id); got != tc.adaptive {
			t.Errorf("%s: adaptive %v", tc.id, got)
		}
	}
}

func TestToolID(t *testing.T) {
	if got := toolID("call_abc|fc_123"); got != "call_abc_fc_123" {
		t.Errorf("got %q", got)
	}
	if got := toolID(strings.Repeat("a", 80)); len(got) != 64 {
		t.Errorf("len %d", len(got))
	}
	if got := toolID("toolu_01A-b"); got != "toolu_01A-b" {
		t.Errorf("got %q", got)
	}
}

var _ ai.Provider = (*Provider)(nil)

// TestOAuthClaudeCodeNames: with a subscription token, tools named like
// Claude Code's go out in its casing (definitions and history) with
// Claude Code's headers, and the model's calls come back under the
// request's names.
func TestOAuthClaudeCodeNames(t *testing.T) {
	data := bytes.ReplaceAll(readTestdata(t, "tool_use.sse"), []byte(`"name":"get_weather"`), []byte(`"name":"Bash"`))
	srv, c := server(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, data) })
	req := simpleRequest(srv.URL)
	req.APIKey = "sk-ant-oat01-abcdef"
	schema := json.RawMessage(`{"type":"object","properties":{}}`)
	req.Tools = []ai.ToolSpec{{Name: "bash", Parameters: schema}, {Name: "read", Parameters: schema}, {Name: "my_tool", Parameters: schema}}
	req.Messages = append(req.Messages,
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: API, Provider: "anthropic", Model: req.Model.ID, StopReason: ai.StopToolUse,
			Content: []ai.Content{{Type: ai.ContentToolCall, ID: "toolu_01", Name: "read", Arguments: json.RawMessage(`{}`)}}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "toolu_01", ToolName: "read", Content: []ai.Content{ai.Text("x")}},
	)
	m, _ := run(t, context.Background(), req)
	r := c.last(t)
	var names []string
	for _, tool := range r.Body["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "Bash,Read,my_tool" {
		t.Errorf("tool names sent: %v", names)
	}
	if body, _ := json.Marshal(r.Body["messages"]); !strings.Contains(string(body), `"name":"Read"`) {
		t.Errorf("history: %s", body)
	}
	for k, want := range map[string]string{"User-Agent": "claude-cli/2.1.322", "x-app": "cli", "anthropic-dangerous-direct-browser-access": "true", "Accept": "application/json"} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	var called []string
	for _, b := range m.Content {
		if b.Type == ai.ContentToolCall {
			called = append(called, b.Name)
		}
	}
	if strings.Join(called, ",") != "bash" {
		t.Errorf("calls: %v (%s)", called, m.ErrorMessage)
	}
}

// A tool's schema reaches the server as the tool gives it: keys in their
// order (not sorted) and "$schema" kept, as pi passes an MCP server's
// input schema on; a schema that is not an object schema is made one.
func TestToolSchemaAsGiven(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := simpleRequest(srv.URL)
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"zeta":{"type":"string","description":"last"},"alpha":{"type":"number","default":2.5}},"required":["zeta"]}`
	req.Tools = []ai.ToolSpec{
		{Name: "meet", Description: "Meet", Parameters: json.RawMessage(" {\n" + schema[1:])},
		{Name: "bare", Parameters: json.RawMessage(`{"properties":{"b":{"type":"string"},"a":{"type":"string"}}}`)},
	}
	run(t, context.Background(), req)
	raw := string(c.last(t).Raw)
	if !strings.Contains(raw, `"input_schema":`+schema) {
		t.Errorf("the schema was not sent as given:\n%s", raw)
	}
	jsonEq(t, "bare tool", c.last(t).Body["tools"].([]any)[1], `{"name":"bare","input_schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}}`)
}
