package openai

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

func codexToken(account string) string {
	claims, _ := json.Marshal(map[string]any{"https://api.openai.com/auth": map[string]string{"chatgpt_account_id": account}})
	return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
}

// TestCodexRequest: the Codex backend gets POST {base}/codex/responses
// with the ChatGPT token, the account id read from it and the body it
// takes; the answer streams as the Responses API's does.
func TestCodexRequest(t *testing.T) {
	srv := newServer(t, serveSSE(t, "responses_tools.sse"))
	model := reasoningModel(srv.URL + "/backend-api")
	model.API = APICodexResponses
	req := userReq(model, "Read main.go and list the directory")
	req.APIKey = codexToken("acct-42")
	req.SessionID = "sess-1"
	req.ThinkingLevel = "high"
	req.Tools = []ai.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	var rec recorder
	msg := NewCodexResponses(nil).Stream(withTimeout(t), req, rec.emit)
	if msg.StopReason != ai.StopToolUse {
		t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
	}
	c := srv.only(t)
	if c.Path != "/backend-api/codex/responses" {
		t.Errorf("path %s", c.Path)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer " + req.APIKey, "chatgpt-account-id": "acct-42", "originator": "pi",
		"OpenAI-Beta": "responses=experimental", "Accept": "text/event-stream", "session-id": "sess-1", "x-client-request-id": "sess-1",
	} {
		if got := c.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	b := c.Body
	jsonEq(t, "instructions", b["instructions"], `"You are a test."`)
	jsonEq(t, "store", b["store"], `false`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "include", b["include"], `["reasoning.encrypted_content"]`)
	jsonEq(t, "text", b["text"], `{"verbosity":"low"}`)
	jsonEq(t, "tool_choice", b["tool_choice"], `"auto"`)
	jsonEq(t, "parallel_tool_calls", b["parallel_tool_calls"], `true`)
	jsonEq(t, "prompt_cache_key", b["prompt_cache_key"], `"sess-1"`)
	if _, ok := b["max_output_tokens"]; ok {
		t.Error("max_output_tokens sent")
	}
	if in, _ := json.Marshal(b["input"]); strings.Contains(string(in), "You are a test.") {
		t.Errorf("the system prompt is in the input too: %s", in)
	}

	// Thinking off: reasoning effort "none"; no instructions: the default.
	srv2 := newServer(t, serveSSE(t, "responses_tools.sse"))
	model.BaseURL = srv2.URL + "/backend-api"
	req.ThinkingLevel, req.SystemPrompt = "off", ""
	NewCodexResponses(nil).Stream(withTimeout(t), req, func(ai.AssistantEvent) {})
	b = srv2.only(t).Body
	jsonEq(t, "reasoning", b["reasoning"], `{"effort":"none"}`)
	jsonEq(t, "instructions", b["instructions"], `"You are a helpful assistant."`)

	// A key that is no ChatGPT token: a clear error, nothing sent.
	srv3 := newServer(t, serveSSE(t, "responses_tools.sse"))
	model.BaseURL = srv3.URL
	req.APIKey = "sk-plain"
	m := NewCodexResponses(nil).Stream(withTimeout(t), req, func(ai.AssistantEvent) {})
	if m.StopReason != ai.StopError || !strings.Contains(m.ErrorMessage, "pisces auth login openai-codex") {
		t.Errorf("plain key: %+v", m)
	}
	srv3.mu.Lock()
	defer srv3.mu.Unlock()
	if len(srv3.reqs) != 0 {
		t.Error("a request was sent")
	}
}

// TestChatGPTTokenOmitsMaxTokens: on the openai provider, a key that is no
// "sk-" API key is a Sign in with ChatGPT token, which takes no
// max_output_tokens.
func TestChatGPTTokenOmitsMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{{"sk-proj-123", true}, {"eyJhbGciOi.chatgpt.token", false}} {
		srv := newServer(t, serveSSE(t, "responses_tools.sse"))
		model := reasoningModel(srv.URL + "/v1")
		model.Provider = "openai"
		req := userReq(model, "hi")
		req.APIKey = tc.key
		NewResponses(nil).Stream(withTimeout(t), req, func(ai.AssistantEvent) {})
		c := srv.only(t)
		if _, ok := c.Body["max_output_tokens"]; ok != tc.want {
			t.Errorf("key %s: max_output_tokens sent %v, want %v", tc.key, ok, tc.want)
		}
		if c.Header.Get("Authorization") != "Bearer "+tc.key {
			t.Errorf("key %s: Authorization %q", tc.key, c.Header.Get("Authorization"))
		}
	}
}
