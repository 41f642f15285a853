package openai

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

func TestCompletionsText(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_text.sse"))
	model := testModel(APICompletions, srv.URL+"/v1")
	model.Headers = map[string]string{"X-Custom": "yes"}
	var rec recorder
	msg := NewCompletions(nil).Stream(withTimeout(t), userReq(model, "Say hello"), rec.emit)

	rec.check(t,
		"start",
		`text_start 0`,
		`text_delta 0 "Hello"`,
		`text_delta 0 " world"`,
		`text_delta 0 "!"`,
		`text_end 0 "Hello world!"`,
		"done stop",
	)
	rec.checkFinal(t, msg)
	if msg.StopReason != ai.StopStop || msg.RawStopReason != "stop" {
		t.Errorf("stop %q raw %q", msg.StopReason, msg.RawStopReason)
	}
	if msg.ResponseID != "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT" {
		t.Errorf("responseId %q", msg.ResponseID)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello world!" {
		t.Errorf("content %+v", msg.Content)
	}
	u := msg.Usage
	if u.Input != 200 || u.Output != 40 || u.CacheRead != 1000 || u.CacheWrite != 0 || u.TotalTokens != 1240 {
		t.Errorf("usage %+v", u)
	}
	wantCost := 200*2/1e6 + 40*8/1e6 + 1000*0.5/1e6
	if math.Abs(u.Cost.Total-wantCost) > 1e-12 {
		t.Errorf("cost %v, want %v", u.Cost.Total, wantCost)
	}
	if msg.API != APICompletions || msg.Provider != "openai" || msg.Model != "gpt-test" {
		t.Errorf("message identity %s %s %s", msg.API, msg.Provider, msg.Model)
	}

	req := srv.only(t)
	if req.Method != "POST" || req.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", req.Method, req.Path)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer sk-test-123" {
		t.Errorf("Authorization %q", got)
	}
	if got := req.Header.Get("X-Custom"); got != "yes" {
		t.Errorf("model header %q", got)
	}
	if req.Header.Get("X-Stainless-Retry-Count") != "0" && req.Header.Get("X-Stainless-Retry-Count") != "" {
		t.Errorf("retry count header %q", req.Header.Get("X-Stainless-Retry-Count"))
	}
	b := req.Body
	jsonEq(t, "model", b["model"], `"gpt-test"`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "stream_options", b["stream_options"], `{"include_usage":true}`)
	jsonEq(t, "messages", b["messages"], `[
		{"role":"system","content":"You are a test."},
		{"role":"user","content":"Say hello"}]`)
	// A server other than api.openai.com gets max_tokens, no store.
	jsonEq(t, "max_tokens", b["max_tokens"], `32000`)
	for _, k := range []string{"max_completion_tokens", "store", "tools", "reasoning_effort"} {
		if _, ok := b[k]; ok {
			t.Errorf("unexpected %s in body", k)
		}
	}
}

func TestCompletionsOpenAIDefaults(t *testing.T) {
	m := testModel(APICompletions, "https://api.openai.com/v1")
	m.Reasoning = true
	req := userReq(m, "hi")
	req.ThinkingLevel = "minimal"
	req.MaxTokens = 1000
	req.SessionID = "sess-9"
	c := resolveCompat(m)
	body := paramsJSON(t, completionsParams(req, c))
	jsonEq(t, "max_completion_tokens", body["max_completion_tokens"], `1000`)
	jsonEq(t, "store", body["store"], `false`)
	jsonEq(t, "reasoning_effort", body["reasoning_effort"], `"minimal"`)
	jsonEq(t, "prompt_cache_key", body["prompt_cache_key"], `"sess-9"`)
	jsonEq(t, "system as developer", body["messages"].([]any)[0], `{"role":"developer","content":"You are a test."}`)
	if _, ok := body["max_tokens"]; ok {
		t.Error("max_tokens sent to OpenAI")
	}
}

func TestCompletionsLength(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_length.sse"))
	var rec recorder
	msg := NewCompletions(nil).Stream(withTimeout(t), userReq(testModel(APICompletions, srv.URL), "story"), rec.emit)
	if msg.StopReason != ai.StopLength || msg.Content[0].Text != "Once upon" {
		t.Errorf("stop %q content %+v", msg.StopReason, msg.Content)
	}
	if srv.only(t).Path != "/chat/completions" {
		t.Errorf("path %q", srv.only(t).Path)
	}
}

func TestCompletionsSeveralToolCalls(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_tools.sse"))
	model := testModel(APICompletions, srv.URL+"/v1")
	req := userReq(model, "look")
	req.Tools = []ai.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "bash", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	}
	var rec recorder
	msg := NewCompletions(nil).Stream(withTimeout(t), req, rec.emit)
	rec.check(t,
		"start",
		`text_start 0`,
		`text_delta 0 "Let me look."`,
		`text_end 0 "Let me look."`,
		`toolcall_start 1 call_DdmO9pD3xa9XTPNJ32zg2hcA read`,
		`toolcall_delta 1 "{\"pa"`,
		`toolcall_delta 1 "th\": \"main"`,
		`toolcall_delta 1 ".go\"}"`,
		`toolcall_end 1 {"path":"main.go"}`,
		`toolcall_start 2 call_ABSg8ax6ozTX6R9VQzvrxN8f bash`,
		`toolcall_delta 2 "{\"command\""`,
		`toolcall_delta 2 ": \"ls -la\"}"`,
		`toolcall_end 2 {"command":"ls -la"}`,
		"done toolUse",
	)
	rec.checkFinal(t, msg)
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "read" || calls[1].Name != "bash" || string(calls[1].Arguments) != `{"command":"ls -la"}` {
		t.Errorf("tool calls %+v", calls)
	}
	if msg.Usage.Input != 300 || msg.Usage.Output != 60 {
		t.Errorf("usage %+v", msg.Usage)
	}
	jsonEq(t, "tools", srv.only(t).Body["tools"], `[
		{"type":"function","function":{"name":"read","description":"Read a file","strict":false,
		 "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
		{"type":"function","function":{"name":"bash","description":"Run a command","strict":false,
		 "parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]`)
}

func TestCompletionsReasoningContent(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_reasoning_content.sse"))
	model := testModel(APICompletions, srv.URL)
	model.Provider = "deepseek"
	model.Reasoning = true
	model.Compat = json.RawMessage(`{"reasoningEffortMap":{"high":"max"}}`)
	req := userReq(model, "hi")
	req.ThinkingLevel = "high"
	var rec recorder
	msg := NewCompletions(nil).Stream(withTimeout(t), req, rec.emit)
	rec.check(t,
		"start",
		`thinking_start 0`,
		`thinking_delta 0 "The user"`,
		`thinking_delta 0 " says hi."`,
		`thinking_end 0 "The user says hi."`,
		`text_start 1`,
		`text_delta 1 "Hi"`,
		`text_delta 1 " there."`,
		`text_end 1 "Hi there."`,
		"done stop",
	)
	if msg.Content[0].ThinkingSignature != "reasoning_content" {
		t.Errorf("thinking signature %q", msg.Content[0].ThinkingSignature)
	}
	if msg.ThinkingLevel != "high" {
		t.Errorf("thinkingLevel %q", msg.ThinkingLevel)
	}
	// DeepSeek's prompt_cache_hit_tokens count as cache reads; usage came
	// in the chunk with finish_reason.
	if u := msg.Usage; u.Input != 4 || u.CacheRead != 16 || u.Output != 12 {
		t.Errorf("usage %+v", u)
	}
	b := srv.only(t).Body
	jsonEq(t, "reasoning_effort", b["reasoning_effort"], `"max"`)
	// Not OpenAI: the system prompt stays "system".
	jsonEq(t, "system", b["messages"].([]any)[0], `{"role":"system","content":"You are a test."}`)
}

func TestCompletionsOllama(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_ollama.sse"))
	model := &ai.Model{
		ID: "qwen3:8b", API: APICompletions, Provider: "ollama", BaseURL: srv.URL + "/v1",
		Reasoning: true, Input: []string{"text"}, MaxTokens: 16384,
		Compat: json.RawMessage(`{"supportsUsageInStreaming":false,"thinkingFormat":"qwen"}`),
	}
	req := userReq(model, "list files")
	req.APIKey = "" // local server, no key
	req.ThinkingLevel = "medium"
	req.Tools = []ai.ToolSpec{{Name: "bash", Description: "Run", Parameters: json.RawMessage(`{"type":"object"}`)}}
	var rec recorder
	msg := NewCompletions(nil).Stream(withTimeout(t), req, rec.emit)
	rec.check(t,
		"start",
		`thinking_start 0`,
		`thinking_delta 0 "Okay"`,
		`thinking_delta 0 ", the user wants"`,
		`thinking_delta 0 " the files."`,
		`thinking_end 0 "Okay, the user wants the files."`,
		`toolcall_start 1 call_7x1yq2ab bash`,
		`toolcall_delta 1 "{\"command\":\"ls\"}"`,
		`toolcall_end 1 {"command":"ls"}`,
		"done toolUse",
	)
	if msg.Content[0].ThinkingSignature != "reasoning" {
		t.Errorf("signature %q", msg.Content[0].ThinkingSignature)
	}
	if msg.Usage.TotalTokens != 0 || msg.Usage.Cost.Total != 0 {
		t.Errorf("usage without a usage chunk: %+v", msg.Usage)
	}
	r := srv.only(t)
	if r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %q", r.Header.Get("Authorization"))
	}
	if _, ok := r.Body["stream_options"]; ok {
		t.Error("stream_options sent although supportsUsageInStreaming is false")
	}
	jsonEq(t, "enable_thinking", r.Body["enable_thinking"], `true`)
	jsonEq(t, "max_tokens", r.Body["max_tokens"], `16384`)
	if _, ok := r.Body["reasoning_effort"]; ok {
		t.Error("reasoning_effort sent with thinkingFormat qwen")
	}
}

func TestCompletionsThinkingFormats(t *testing.T) {
	cases := []struct {
		compat, level string
		key, want     string
	}{
		{`{"thinkingFormat":"qwen"}`, "off", "enable_thinking", `false`},
		{`{"thinkingFormat":"qwen-chat-template"}`, "high", "chat_template_kwargs", `{"enable_thinking":true}`},
		{`{"thinkingFormat":"qwen-chat-template"}`, "off", "chat_template_kwargs", `{"enable_thinking":false}`},
		{`{"thinkingFormat":"zai"}`, "low", "thinking", `{"type":"enabled"}`},
		{`{"thinkingFormat":"zai"}`, "", "thinking", `{"type":"disabled"}`},
		{`{}`, "low", "reasoning_effort", `"low"`},
		{`{"supportsReasoningEffort":false}`, "low", "reasoning_effort", ``},
		{`{}`, "off", "reasoning_effort", ``},
	}
	for _, tc := range cases {
		m := testModel(APICompletions, "http://127.0.0.1:8080/v1")
		m.Reasoning = true
		m.Compat = json.RawMessage(tc.compat)
		req := userReq(m, "x")
		req.ThinkingLevel = tc.level
		body := paramsJSON(t, completionsParams(req, resolveCompat(m)))
		v, ok := body[tc.key]
		if tc.want == "" {
			if ok {
				t.Errorf("%s %s: %s sent: %v", tc.compat, tc.level, tc.key, v)
			}
			continue
		}
		jsonEq(t, tc.compat+" "+tc.level, v, tc.want)
	}
	// A model without reasoning gets no thinking switch at all.
	m := testModel(APICompletions, "http://127.0.0.1:8080/v1")
	m.Compat = json.RawMessage(`{"thinkingFormat":"qwen"}`)
	req := userReq(m, "x")
	req.ThinkingLevel = "high"
	if _, ok := paramsJSON(t, completionsParams(req, resolveCompat(m)))["enable_thinking"]; ok {
		t.Error("enable_thinking sent for a model without reasoning")
	}
}

func TestCompletionsErrorStatuses(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		message   string
		retry     time.Duration
		retryable bool
	}{
		{"400", 400, nil, `{"error":{"message":"Invalid 'messages[1].content': string too long.","type":"invalid_request_error","param":"messages[1].content","code":"string_above_max_length"}}`,
			"Invalid 'messages[1].content': string too long.", 0, false},
		{"401", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-test-***123.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"Incorrect API key provided: sk-test-***123.", 0, false},
		{"429", 429, map[string]string{"Retry-After": "7", "X-Ratelimit-Remaining-Requests": "0"}, `{"error":{"message":"Rate limit reached for gpt-4.1 on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			"Rate limit reached for gpt-4.1 on requests per min (RPM): Limit 3, Used 3, Requested 1.", 7 * time.Second, true},
		{"500", 500, nil, `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			"The server had an error while processing your request. Sorry about that!", 0, true},
		{"503 retry-after-ms", 503, map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, `{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error","param":null,"code":null}}`,
			"The engine is currently overloaded, please try again later.", 1500 * time.Millisecond, true},
		{"ollama 404", 404, nil, `{"error":{"message":"model \"qwen9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
			`model "qwen9" not found, try pulling it first`, 0, false},
		{"string error", 400, nil, `{"error":"invalid model"}`, "invalid model", 0, false},
		{"plain text", 502, map[string]string{"Content-Type": "text/html"}, "<html>Bad Gateway</html>", "<html>Bad Gateway</html>", 0, true},
		{"empty body", 500, nil, "", "Internal Server Error", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, msg := streamStatusError(t, NewCompletions(nil), APICompletions, tc.status, tc.header, tc.body, tc.message, tc.retry)
			rec.checkFinal(t, msg)
		})
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := map[string][]string{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}
	if d := retryAfter(h, now); d != 30*time.Second {
		t.Errorf("date Retry-After: %v", d)
	}
	h = map[string][]string{"Retry-After": {"0.5"}}
	if d := retryAfter(h, now); d != 500*time.Millisecond {
		t.Errorf("fractional Retry-After: %v", d)
	}
	if d := retryAfter(map[string][]string{}, now); d != 0 {
		t.Errorf("none: %v", d)
	}
}

func TestCompletionsErrorInStream(t *testing.T) {
	_, rec, msg := streamFrom(t, NewCompletions(nil), APICompletions, serveSSE(t, "completions_stream_error.sse"))
	rec.check(t, "start", "text_start 0", `text_delta 0 "Partial"`, "error error")
	providerError(t, msg)
	if msg.ErrorStatus != 502 || msg.ErrorMessage != "502 Provider returned error\nupstream overloaded" {
		t.Errorf("status %d message %q", msg.ErrorStatus, msg.ErrorMessage)
	}
	// What arrived before the error is kept.
	if msg.Content[0].Text != "Partial" {
		t.Errorf("content %+v", msg.Content)
	}
}

func TestCompletionsContentFilter(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_content_filter.sse"))
	msg := NewCompletions(nil).Stream(withTimeout(t), userReq(testModel(APICompletions, srv.URL), "x"), nil)
	providerError(t, msg)
	if !strings.Contains(msg.ErrorMessage, "content_filter") {
		t.Errorf("message %q", msg.ErrorMessage)
	}
}

func TestCompletionsConnectionCut(t *testing.T) {
	for _, mode := range []string{"reset", "eof"} {
		t.Run(mode, func(t *testing.T) {
			// In mode eof the server ends the body cleanly but never sends [DONE].
			streamCut(t, NewCompletions(nil), APICompletions, "completions_cut.sse", mode, "Hel")
		})
	}
}

func TestCompletionsConnectionRefused(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_text.sse"))
	url := srv.URL
	srv.Close()
	msg := NewCompletions(nil).Stream(withTimeout(t), userReq(testModel(APICompletions, url), "x"), nil)
	providerError(t, msg)
	want := "cannot connect to openai at " + url + ": connection refused (is the server running?)"
	if msg.ErrorStatus != 0 || msg.ErrorMessage != want {
		t.Errorf("status %d message %q, want %q", msg.ErrorStatus, msg.ErrorMessage, want)
	}
}

func TestCompletionsAbort(t *testing.T) {
	srv := newServer(t, serveSlow(t, "completions_text.sse", 2))
	var rec recorder
	ctx, emit := cancelOn(t, &rec, ai.EvTextDelta) // the user presses Esc after the first words
	start := time.Now()
	msg := NewCompletions(nil).Stream(ctx, userReq(testModel(APICompletions, srv.URL), "x"), emit)
	if time.Since(start) > 30*time.Second { // serveSlow holds the stream for a minute
		t.Errorf("abort took %v", time.Since(start))
	}
	rec.check(t, "start", "text_start 0", `text_delta 0 "Hello"`, "error aborted")
	rec.checkFinal(t, msg)
	if msg.StopReason != ai.StopAborted || msg.ErrorMessage != "Request was aborted" {
		t.Errorf("stop %q message %q", msg.StopReason, msg.ErrorMessage)
	}
}

func TestCompletionsAbortBeforeStart(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_text.sse"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rec recorder
	msg := NewCompletions(nil).Stream(ctx, userReq(testModel(APICompletions, srv.URL), "x"), rec.emit)
	rec.check(t, "start", "error aborted")
	if msg.StopReason != ai.StopAborted {
		t.Errorf("stop %q", msg.StopReason)
	}
}

// A conversation with images, tool calls, tool results (with images) and
// thinking, as the request body carries it.
func TestCompletionsMessages(t *testing.T) {
	model := testModel(APICompletions, "https://api.openai.com/v1")
	img := ai.Image("iVBORw0KGgo=", "image/png")
	msgs := []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is this?"), img)},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "openai", Model: "gpt-test", StopReason: ai.StopToolUse,
			Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: "hmm", ThinkingSignature: "reasoning_content"},
				ai.Text("Looking."),
				{Type: ai.ContentToolCall, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.png"}`)},
				{Type: ai.ContentToolCall, ID: "call_2|fc_abc+/=", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
			}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []ai.Content{img}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_2|fc_abc+/=", ToolName: "bash", Content: []ai.Content{ai.Text("a.png"), ai.Text("b.png")}},
		// An aborted turn is not sent again, and neither is its call.
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "openai", Model: "gpt-test", StopReason: ai.StopAborted,
			Content: []ai.Content{{Type: ai.ContentToolCall, ID: "call_x", Name: "bash", Arguments: json.RawMessage(`{}`)}}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("thanks")},
		// Another provider's turn: its thinking goes back as text; the
		// unanswered call gets an error result.
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: "anthropic-messages", Provider: "anthropic", Model: "claude", StopReason: ai.StopToolUse,
			Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: "Let me think", ThinkingSignature: "EqQBCkYIBxgCKkA="},
				{Type: ai.ContentToolCall, ID: "toolu_01", Name: "bash", Arguments: json.RawMessage(`{"command":"pwd"}`)},
			}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("go on")},
	}
	req := &ai.Request{Model: model, SystemPrompt: "sys", Messages: msgs}
	body := paramsJSON(t, completionsParams(req, resolveCompat(model)))
	jsonEq(t, "messages", body["messages"], `[
		{"role":"system","content":"sys"},
		{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
		{"role":"assistant","content":"Looking.","reasoning_content":"hmm","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.png\"}"}},
			{"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"(see attached image)"},
		{"role":"tool","tool_call_id":"call_2","content":"a.png\nb.png"},
		{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
		{"role":"user","content":"thanks"},
		{"role":"assistant","content":"Let me think","tool_calls":[
			{"id":"toolu_01","type":"function","function":{"name":"bash","arguments":"{\"command\":\"pwd\"}"}}]},
		{"role":"tool","tool_call_id":"toolu_01","content":"No result provided"},
		{"role":"user","content":"go on"}]`)
	// Tool history without tools: an empty tools list for proxies.
	jsonEq(t, "tools", body["tools"], `[]`)
}

func TestCompletionsMistralCompat(t *testing.T) {
	model := &ai.Model{ID: "devstral", API: APICompletions, Provider: "mistral", BaseURL: "https://api.mistral.ai/v1", Input: []string{"text"},
		MaxTokens: 8000, Compat: json.RawMessage(`{"requiresAssistantAfterToolResult":true}`)}
	msgs := []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi")},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "mistral", Model: "devstral", StopReason: ai.StopToolUse,
			Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: "plan"},
				{Type: ai.ContentToolCall, ID: "call_abc-123_xyz", Name: "bash", Arguments: json.RawMessage(`{}`)},
			}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_abc-123_xyz", ToolName: "bash",
			Content: []ai.Content{ai.Text("ok"), ai.Image("AAAA", "image/png")}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("next")},
	}
	req := &ai.Request{Model: model, Messages: msgs}
	body := paramsJSON(t, completionsParams(req, resolveCompat(model)))
	jsonEq(t, "messages", body["messages"], `[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"plan","tool_calls":[{"id":"callabc12","type":"function","function":{"name":"bash","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"callabc12","content":"ok","name":"bash"},
		{"role":"assistant","content":"I have processed the tool results."},
		{"role":"user","content":"next"}]`)
	jsonEq(t, "max_tokens", body["max_tokens"], `8000`)
}

func TestDetectCompat(t *testing.T) {
	c := detectCompat(&ai.Model{Provider: "openai", BaseURL: "https://api.openai.com/v1"})
	if !c.isOpenAI || !c.supportsStore || !c.supportsDeveloperRole || c.maxTokensField != "max_completion_tokens" {
		t.Errorf("openai: %+v", c)
	}
	c = detectCompat(&ai.Model{Provider: "openai"}) // default base URL
	if !c.isOpenAI {
		t.Errorf("default base URL is OpenAI's")
	}
	c = detectCompat(&ai.Model{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1"})
	if c.isOpenAI || c.supportsStore || c.supportsDeveloperRole || c.maxTokensField != "max_tokens" || !c.supportsUsageInStreaming || !c.supportsReasoningEffort {
		t.Errorf("ollama: %+v", c)
	}
	c = detectCompat(&ai.Model{Provider: "xai", BaseURL: "https://api.x.ai/v1"})
	if c.supportsReasoningEffort {
		t.Errorf("xai: %+v", c)
	}
	c = detectCompat(&ai.Model{Provider: "zai", BaseURL: "https://api.z.ai/api/paas/v4"})
	if c.thinkingFormat != "zai" {
		t.Errorf("zai: %+v", c)
	}
	c = resolveCompat(&ai.Model{Provider: "custom", BaseURL: "http://localhost:8000/v1",
		Compat: json.RawMessage(`{"supportsStore":true,"supportsDeveloperRole":true,"maxTokensField":"max_completion_tokens","supportsStrictMode":false}`)})
	if !c.supportsStore || !c.supportsDeveloperRole || c.maxTokensField != "max_completion_tokens" || c.supportsStrictMode {
		t.Errorf("overrides: %+v", c)
	}
}

// A server that interleaves the argument text of two calls: the first call's
// block is closed when the second starts, and its late text still counts.
func TestCompletionsInterleavedToolCalls(t *testing.T) {
	sse := "" +
		`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	srv := newServer(t, serveEvents(sse))
	msg := NewCompletions(nil).Stream(withTimeout(t), userReq(testModel(APICompletions, srv.URL), "x"), nil)
	calls := msg.ToolCalls()
	if msg.StopReason != ai.StopToolUse || len(calls) != 2 ||
		string(calls[0].Arguments) != `{"path":"a.go"}` || calls[0].ArgumentsError != "" ||
		string(calls[1].Arguments) != `{"command":"ls"}` {
		t.Errorf("stop %q calls %+v", msg.StopReason, calls)
	}
}

// TestPriorityServiceTier: fast mode (Request.Priority) asks OpenAI's own
// API for service_tier "priority" through Chat Completions and Responses;
// another server (an OpenAI-compatible one) never gets the member, nor
// does OpenAI without Priority.
func TestPriorityServiceTier(t *testing.T) {
	for _, c := range []struct {
		api, base string
		priority  bool
		want      string // "" = no service_tier
	}{
		{APICompletions, "https://api.openai.com/v1", true, `"priority"`},
		{APICompletions, "https://api.openai.com/v1", false, ""},
		{APICompletions, "http://localhost:8080/v1", true, ""},
		{APIResponses, "https://api.openai.com/v1", true, `"priority"`},
		{APIResponses, "", true, `"priority"`},
		{APIResponses, "https://openrouter.ai/api/v1", true, ""},
	} {
		m := testModel(c.api, c.base)
		req := userReq(m, "hi")
		req.Priority = c.priority
		var body map[string]any
		if c.api == APICompletions {
			body = paramsJSON(t, completionsParams(req, resolveCompat(m)))
		} else {
			body = paramsJSON(t, responsesParams(req, resolveCompat(m)))
		}
		got, ok := body["service_tier"]
		switch {
		case c.want == "" && ok:
			t.Errorf("%s %q priority=%v: service_tier %v sent", c.api, c.base, c.priority, got)
		case c.want != "":
			jsonEq(t, c.api+" service_tier", got, c.want)
		}
	}
}
