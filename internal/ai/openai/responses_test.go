package openai

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// meetSchema is an MCP server's input schema as it wrote it: "$schema",
// keys out of alphabetical order.
const meetSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"party":{"type":"string"},"count":{"type":"integer"}},"required":["party"]}`

func reasoningModel(baseURL string) *ai.Model {
	m := testModel(APIResponses, baseURL)
	m.ID = "gpt-5"
	m.Reasoning = true
	return m
}

func TestResponsesThinkingTextAndTools(t *testing.T) {
	srv := newServer(t, serveSSE(t, "responses_tools.sse"))
	model := reasoningModel(srv.URL + "/v1")
	req := userReq(model, "Read main.go and list the directory")
	req.ThinkingLevel = "high"
	req.SessionID = "sess-1"
	req.Tools = []ai.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "bash", Description: "Run", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "meet", Parameters: json.RawMessage(meetSchema)},
	}
	var rec recorder
	msg := NewResponses(nil).Stream(withTimeout(t), req, rec.emit)
	rec.check(t,
		"start",
		`thinking_start 0`,
		`thinking_delta 0 "**Reading the file**\n\n"`,
		`thinking_delta 0 "I need main.go."`,
		`thinking_delta 0 "\n\n"`,
		`thinking_delta 0 "**Listing**\n\nAlso list the directory."`,
		`thinking_end 0 "**Reading the file**\n\nI need main.go.\n\n**Listing**\n\nAlso list the directory."`,
		`text_start 1`,
		`text_delta 1 "Reading"`,
		`text_delta 1 " it now."`,
		`text_end 1 "Reading it now."`,
		`toolcall_start 2 call_Qx1bT6Ua8dM2zPr4|fc_68b9f2a5d2e08190b3c5e7a9f1b3d5c7 read`,
		`toolcall_delta 2 "{\"path\":"`,
		`toolcall_delta 2 "\"main.go\"}"`,
		`toolcall_end 2 {"path":"main.go"}`,
		`toolcall_start 3 call_Wk3nB7Vc9eN5yQs2|fc_68b9f2a6e3f18190c4d6f8a0b2c4e6d8 bash`,
		`toolcall_delta 3 "{\"command\":\"ls\"}"`,
		`toolcall_end 3 {"command":"ls"}`,
		"done toolUse",
	)
	rec.checkFinal(t, msg)
	if msg.ResponseID != "resp_68b9f2a1c3d08190a7e5b2f4c6d8e0a1" || msg.RawStopReason != "completed" {
		t.Errorf("responseId %q raw stop %q", msg.ResponseID, msg.RawStopReason)
	}
	u := msg.Usage
	if u.Input != 500 || u.Output != 300 || u.CacheRead != 1500 || u.TotalTokens != 2300 {
		t.Errorf("usage %+v", u)
	}
	if want := 500*2/1e6 + 300*8/1e6 + 1500*0.5/1e6; math.Abs(u.Cost.Total-want) > 1e-12 {
		t.Errorf("cost %v want %v", u.Cost.Total, want)
	}
	// The reasoning item is kept whole for the next request.
	var item map[string]any
	if err := json.Unmarshal([]byte(msg.Content[0].ThinkingSignature), &item); err != nil {
		t.Fatalf("thinking signature %q: %v", msg.Content[0].ThinkingSignature, err)
	}
	if item["type"] != "reasoning" || item["id"] != "rs_68b9f2a2e4a08190b1c3d5e7f9a1b3c5" || item["encrypted_content"] == nil {
		t.Errorf("reasoning item %v", item)
	}
	if msg.Content[1].TextSignature != `{"v":1,"id":"msg_68b9f2a4b1c88190a2d4f6a8c0e2f4a6"}` {
		t.Errorf("text signature %q", msg.Content[1].TextSignature)
	}

	r := srv.only(t)
	if r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer sk-test-123" {
		t.Errorf("path %q auth %q", r.Path, r.Header.Get("Authorization"))
	}
	b := r.Body
	jsonEq(t, "model", b["model"], `"gpt-5"`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "store", b["store"], `false`)
	jsonEq(t, "max_output_tokens", b["max_output_tokens"], `32000`)
	jsonEq(t, "reasoning", b["reasoning"], `{"effort":"high","summary":"auto"}`)
	jsonEq(t, "include", b["include"], `["reasoning.encrypted_content"]`)
	jsonEq(t, "prompt_cache_key", b["prompt_cache_key"], `"sess-1"`)
	jsonEq(t, "input", b["input"], `[
		{"role":"developer","content":"You are a test."},
		{"role":"user","content":[{"type":"input_text","text":"Read main.go and list the directory"}]}]`)
	jsonEq(t, "tools", b["tools"], `[
		{"type":"function","name":"read","description":"Read a file","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string"}}}},
		{"type":"function","name":"bash","description":"Run","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"string"}}}},
		{"type":"function","name":"meet","strict":false,"parameters":`+meetSchema+`}]`)
	// The schema goes as the tool gives it: keys in its order, "$schema"
	// kept (the SDK's map-typed field would sort them).
	if !strings.Contains(string(r.Raw), `{"strict":false,"parameters":`+meetSchema+`,"name":"meet","type":"function"}`) {
		t.Errorf("the schema was not sent as given:\n%s", r.Raw)
	}

	// The answer goes back as the next request's input: the reasoning item
	// as it came, the message with its id, the calls with call_id and id,
	// the results by call_id.
	next := &ai.Request{Model: model, Messages: []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("go")},
		msg,
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: msg.Content[2].ID, ToolName: "read",
			Content: []ai.Content{ai.Text("package main"), ai.Image("R0lG", "image/gif")}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: msg.Content[3].ID, ToolName: "bash", Content: []ai.Content{ai.Text("main.go")}},
	}}
	in := paramsJSON(t, responsesParams(next, resolveCompat(model)))["input"]
	jsonEq(t, "replayed input", in, `[
		{"role":"user","content":[{"type":"input_text","text":"go"}]},
		{"id":"rs_68b9f2a2e4a08190b1c3d5e7f9a1b3c5","type":"reasoning","encrypted_content":"gAAAAABouaKi0x7QmZ8vTq3c9PzLk2N5w1Hj4sYb6dFg8e0aRtUv","summary":[
			{"type":"summary_text","text":"**Reading the file**\n\nI need main.go."},
			{"type":"summary_text","text":"**Listing**\n\nAlso list the directory."}]},
		{"id":"msg_68b9f2a4b1c88190a2d4f6a8c0e2f4a6","type":"message","role":"assistant","status":"completed",
		 "content":[{"type":"output_text","text":"Reading it now.","annotations":[]}]},
		{"type":"function_call","call_id":"call_Qx1bT6Ua8dM2zPr4","id":"fc_68b9f2a5d2e08190b3c5e7a9f1b3d5c7","name":"read","arguments":"{\"path\":\"main.go\"}"},
		{"type":"function_call","call_id":"call_Wk3nB7Vc9eN5yQs2","id":"fc_68b9f2a6e3f18190c4d6f8a0b2c4e6d8","name":"bash","arguments":"{\"command\":\"ls\"}"},
		{"type":"function_call_output","call_id":"call_Qx1bT6Ua8dM2zPr4","output":"package main"},
		{"type":"function_call_output","call_id":"call_Wk3nB7Vc9eN5yQs2","output":"main.go"},
		{"role":"user","content":[{"type":"input_text","text":"Attached image(s) from tool result:"},
			{"type":"input_image","detail":"auto","image_url":"data:image/gif;base64,R0lG"}]}]`)
}

func TestResponsesIncomplete(t *testing.T) {
	srv := newServer(t, serveSSE(t, "responses_incomplete.sse"))
	model := testModel(APIResponses, srv.URL)
	var rec recorder
	msg := NewResponses(nil).Stream(withTimeout(t), userReq(model, "hi"), rec.emit)
	rec.check(t, "start", "text_start 0", `text_delta 0 "Hello"`, `text_delta 0 " there"`, `text_end 0 "Hello there"`, "done length")
	if msg.StopReason != ai.StopLength || msg.RawStopReason != "incomplete" || msg.ResponseID != "resp_text1" {
		t.Errorf("stop %q raw %q id %q", msg.StopReason, msg.RawStopReason, msg.ResponseID)
	}
	b := srv.only(t).Body
	// Not a reasoning model: system role, no reasoning settings.
	jsonEq(t, "input", b["input"], `[{"role":"system","content":"You are a test."},{"role":"user","content":[{"type":"input_text","text":"hi"}]}]`)
	for _, k := range []string{"reasoning", "include", "tools"} {
		if _, ok := b[k]; ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

func TestResponsesFailed(t *testing.T) {
	_, rec, msg := streamFrom(t, NewResponses(nil), APIResponses, serveSSE(t, "responses_failed.sse"))
	rec.check(t, "start", "error error")
	providerError(t, msg)
	if msg.ErrorStatus != 500 || !strings.Contains(msg.ErrorMessage, "server_error: The model produced invalid content") {
		t.Errorf("status %d message %q", msg.ErrorStatus, msg.ErrorMessage)
	}
	if msg.ResponseID != "resp_fail" {
		t.Errorf("responseId %q", msg.ResponseID)
	}
}

func TestResponsesErrorEvent(t *testing.T) {
	_, rec, msg := streamFrom(t, NewResponses(nil), APIResponses, serveSSE(t, "responses_error_event.sse"))
	rec.check(t, "start", "text_start 0", `text_delta 0 "Par"`, "error error")
	providerError(t, msg)
	if msg.ErrorStatus != 429 || !strings.HasPrefix(msg.ErrorMessage, "429 rate_limit_exceeded: Rate limit reached for gpt-5") {
		t.Errorf("status %d message %q", msg.ErrorStatus, msg.ErrorMessage)
	}
}

func TestResponsesNestedErrorEvent(t *testing.T) {
	srv := newServer(t, serveEvents("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}\n\n"))
	msg := NewResponses(nil).Stream(withTimeout(t), userReq(testModel(APIResponses, srv.URL), "x"), nil)
	providerError(t, msg)
	if msg.ErrorMessage != "context_length_exceeded: Your input exceeds the context window of this model." {
		t.Errorf("message %q", msg.ErrorMessage)
	}
}

func TestResponsesErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		header map[string]string
		body   string
		msg    string
		retry  time.Duration
	}{
		{400, nil, `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`,
			"Unsupported parameter: 'temperature' is not supported with this model.", 0},
		{401, nil, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "Incorrect API key provided.", 0},
		{429, map[string]string{"Retry-After": "20"}, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "You exceeded your current quota.", 20 * time.Second},
		{500, nil, `{"error":{"message":"An error occurred while processing your request.","type":"server_error","param":null,"code":null}}`, "An error occurred while processing your request.", 0},
		{503, map[string]string{"Retry-After-Ms": "250"}, `{"error":{"message":"Service Unavailable","type":"server_error","param":null,"code":null}}`, "Service Unavailable", 250 * time.Millisecond},
	} {
		streamStatusError(t, NewResponses(nil), APIResponses, tc.status, tc.header, tc.body, tc.msg, tc.retry)
	}
}

func TestResponsesConnectionCut(t *testing.T) {
	for _, mode := range []string{"reset", "eof"} {
		msg := streamCut(t, NewResponses(nil), APIResponses, "responses_cut.sse", mode, "Hal")
		if msg.ResponseID != "resp_cut" {
			t.Errorf("%s: id %q", mode, msg.ResponseID)
		}
	}
}

func TestResponsesAbort(t *testing.T) {
	srv := newServer(t, serveSlow(t, "responses_tools.sse", 5))
	var rec recorder
	ctx, emit := cancelOn(t, &rec, ai.EvThinkingDelta)
	req := userReq(reasoningModel(srv.URL), "x")
	req.ThinkingLevel = "low"
	msg := NewResponses(nil).Stream(ctx, req, emit)
	rec.check(t, "start", "thinking_start 0", `thinking_delta 0 "**Reading the file**\n\n"`, "error aborted")
	rec.checkFinal(t, msg)
	if msg.StopReason != ai.StopAborted {
		t.Errorf("stop %q", msg.StopReason)
	}
}

// Turns of other models: no reasoning replay, no fc ids, thinking as text,
// unanswered calls answered.
func TestResponsesForeignHistory(t *testing.T) {
	model := reasoningModel("https://api.openai.com/v1")
	req := &ai.Request{Model: model, SystemPrompt: "sys", Messages: []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("look"), ai.Image("AAAA", "image/jpeg"))},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: "openai-completions", Provider: "openrouter", Model: "x", StopReason: ai.StopToolUse,
			Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: "thought", ThinkingSignature: "reasoning"},
				ai.Text("ok"),
				{Type: ai.ContentToolCall, ID: "call_9|fc_9", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
			}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("and?")},
	}}
	in := paramsJSON(t, responsesParams(req, resolveCompat(model)))["input"]
	jsonEq(t, "input", in, `[
		{"role":"developer","content":"sys"},
		{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","detail":"auto","image_url":"data:image/jpeg;base64,AAAA"}]},
		{"role":"assistant","content":"thought"},
		{"role":"assistant","content":"ok"},
		{"type":"function_call","call_id":"call_9","name":"bash","arguments":"{\"command\":\"ls\"}"},
		{"type":"function_call_output","call_id":"call_9","output":"No result provided"},
		{"role":"user","content":[{"type":"input_text","text":"and?"}]}]`)
}

func TestResponsesConnectionRefused(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_text.sse"))
	url := srv.URL
	srv.Close()
	msg := NewResponses(nil).Stream(withTimeout(t), userReq(testModel(APIResponses, url), "x"), nil)
	providerError(t, msg)
	want := "cannot connect to openai at " + url + ": connection refused (is the server running?)"
	if msg.ErrorStatus != 0 || msg.ErrorMessage != want {
		t.Errorf("status %d message %q, want %q", msg.ErrorStatus, msg.ErrorMessage, want)
	}
}
