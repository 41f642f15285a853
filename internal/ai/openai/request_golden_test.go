package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/testenv"
)

var updateRequests = flag.Bool("update", false, "rewrite the request bodies in testdata/requests")

// completionsCase is one Chat Completions request whose body, exactly as
// sent, is kept in testdata/requests/completions_<name>.json.
type completionsCase struct {
	name   string
	req    func(baseURL string) *ai.Request
	openai bool // sent to http://api.openai.com/v1 (dialled to the local server)
}

// dialTo is a client that connects every request to the local server srv,
// whatever the host of its URL.
func dialTo(srv *fakeServer) *http.Client {
	addr := srv.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
}

// odd is text with everything an encoder can get wrong: HTML characters
// (sent unescaped), quotes and backslashes, control characters, U+2028 and
// U+2029, non-ASCII, an emoji and invalid UTF-8.
const odd = "<script>alert('x')</script> & \"q\" \\ \x00\x01\t\n\r\u2028\u2029 é 日本 😀 \xff\xfe end"

func completionsCases() []completionsCase {
	tools := []ai.ToolSpec{
		{Name: "read", Description: "Read a file <path> & more", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a <path>"},"limit":{"type":"integer","minimum":1,"maximum":1e21,"default":2.50}},"required":["path"],"additionalProperties":false}`)},
		{Name: "bash", Parameters: json.RawMessage(`{"properties":{"command":{"type":"string"}},"type":"object"}`)},
		{Name: "none"},
		{Name: "broken", Description: "bad schema", Parameters: json.RawMessage(`[1,2]`)},
	}
	img := ai.Image("iVBORw0KGgo=", "image/png")
	conversation := func(provider string) []ai.Message {
		return []ai.Message{
			&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is this?"), img)},
			&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: provider, Model: "gpt-test", StopReason: ai.StopToolUse,
				Content: []ai.Content{
					{Type: ai.ContentThinking, Thinking: "hmm <b>", ThinkingSignature: "reasoning_content"},
					{Type: ai.ContentThinking, Thinking: "more & é", ThinkingSignature: "reasoning"},
					{Type: ai.ContentThinking, Thinking: "secret", Redacted: true},
					ai.Text("Looking."),
					ai.Text("  "),
					{Type: ai.ContentToolCall, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.png"}`)},
					{Type: ai.ContentToolCall, ID: "call_2|fc_abc+/=", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
					{Type: ai.ContentToolCall, ID: "call_3", Name: "none"},
				}},
			&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []ai.Content{img}},
			&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_2|fc_abc+/=", ToolName: "bash", Content: []ai.Content{ai.Text("a.png"), ai.Text("b.png")}},
			&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: provider, Model: "gpt-test", StopReason: ai.StopAborted,
				Content: []ai.Content{{Type: ai.ContentToolCall, ID: "call_x", Name: "bash", Arguments: json.RawMessage(`{}`)}}},
			&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("thanks " + odd)},
			&ai.AssistantMessage{Role: ai.RoleAssistant, API: "anthropic-messages", Provider: "anthropic", Model: "claude", StopReason: ai.StopToolUse,
				Content: []ai.Content{
					{Type: ai.ContentThinking, Thinking: "Let me think", ThinkingSignature: "EqQBCkYIBxgCKkA="},
					{Type: ai.ContentToolCall, ID: "toolu_01-very-long-identifier-of-more-than-forty-characters", Name: "bash", Arguments: json.RawMessage(`{"command":"pwd"}`)},
				}},
			&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(img)},
			&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent()},
			&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: provider, Model: "gpt-test", StopReason: ai.StopStop,
				Content: []ai.Content{ai.Text("")}},
			&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: provider, Model: "gpt-test", StopReason: ai.StopStop,
				Content: []ai.Content{{Type: ai.ContentThinking, Thinking: "only thinking", ThinkingSignature: "reasoning_text"}}},
			&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("go on")},
		}
	}
	model := func(baseURL string, compat string) *ai.Model {
		m := testModel(APICompletions, baseURL)
		if compat != "" {
			m.Compat = json.RawMessage(compat)
		}
		return m
	}
	return []completionsCase{
		{name: "text", req: func(u string) *ai.Request { return userReq(model(u, ""), "Say hello") }},
		{name: "openai_tools", req: func(u string) *ai.Request {
			m := model(u, `{"supportsStore":true,"supportsDeveloperRole":true,"maxTokensField":"max_completion_tokens"}`)
			m.Provider = "openai"
			m.Reasoning = true
			req := userReq(m, odd)
			req.SystemPrompt = "System " + odd
			req.ThinkingLevel = "minimal"
			req.MaxTokens = 1000
			req.SessionID = "sess-9"
			req.Tools = tools
			return req
		}},
		{name: "conversation", req: func(u string) *ai.Request {
			req := userReq(model(u, ""), "")
			req.Messages = conversation("openai")
			req.APIKey = ""
			return req
		}},
		{name: "conversation_tools", req: func(u string) *ai.Request {
			req := userReq(model(u, `{"supportsStrictMode":false,"supportsUsageInStreaming":false}`), "")
			req.Messages = conversation("openai")
			req.Tools = tools[:2]
			return req
		}},
		{name: "mistral", req: func(u string) *ai.Request {
			m := model(u, `{"requiresAssistantAfterToolResult":true}`)
			m.Provider = "mistral"
			req := userReq(m, "")
			req.Messages = conversation("mistral")
			return req
		}},
		{name: "thinking_as_text", req: func(u string) *ai.Request {
			m := model(u, `{"requiresThinkingAsText":true,"requiresToolResultName":true}`)
			req := userReq(m, "")
			req.Messages = conversation("openai")
			return req
		}},
		{name: "zai", req: func(u string) *ai.Request {
			m := model(u, `{"thinkingFormat":"zai"}`)
			m.Reasoning = true
			req := userReq(m, "")
			req.Messages = conversation("openai")
			req.ThinkingLevel = "high"
			return req
		}},
		{name: "reasoning_ascii", req: func(u string) *ai.Request {
			m := model(u, `{"requiresToolResultName":true}`)
			req := userReq(m, "")
			req.Messages = []ai.Message{
				&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi")},
				&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "openai", Model: "gpt-test", StopReason: ai.StopToolUse,
					Content: []ai.Content{
						{Type: ai.ContentThinking, Thinking: "plain <b> & 'ok'", ThinkingSignature: "reasoning"},
						{Type: ai.ContentToolCall, ID: "c1", Name: "x<y>&z", Arguments: json.RawMessage(`{"a":"<b>"}`)},
						{Type: ai.ContentToolCall, ID: "c2", Name: "n\u00e9", Arguments: json.RawMessage(`{}`)},
					}},
				&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c1", ToolName: "x<y>&z", Content: []ai.Content{ai.Text("<ok>")}},
				&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c2", ToolName: "né", Content: []ai.Content{ai.Text("é")}},
			}
			return req
		}},
		{name: "image_urls", req: func(u string) *ai.Request {
			m := model(u, `{"supportsImageUrls": true}`)
			req := userReq(m, "")
			url := "https://example.com/cat.png?a=1&b=<x>\u2028é"
			req.Messages = []ai.Message{
				&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is this?"), ai.ImageURL(url), img)},
				&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "openai", Model: "gpt-test", StopReason: ai.StopToolUse,
					Content: []ai.Content{{Type: ai.ContentToolCall, ID: "c1", Name: "look", Arguments: json.RawMessage(`{}`)}}},
				&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c1", ToolName: "look", Content: []ai.Content{ai.ImageURL(url), img}},
			}
			return req
		}},
		{name: "qwen", req: func(u string) *ai.Request {
			m := model(u, `{"thinkingFormat":"qwen"}`)
			m.Reasoning = true
			return userReq(m, "x")
		}},
		{name: "qwen_chat_template", req: func(u string) *ai.Request {
			m := model(u, `{"thinkingFormat":"qwen-chat-template","maxTokensField":"max_completion_tokens"}`)
			m.Reasoning = true
			m.MaxTokens = 4096
			req := userReq(m, "x")
			req.ThinkingLevel = "low"
			return req
		}},
		{name: "effort_map", req: func(u string) *ai.Request {
			m := model(u, `{"reasoningEffortMap":{"high":"max"},"supportsDeveloperRole":true}`)
			m.Reasoning = true
			req := userReq(m, "x")
			req.ThinkingLevel = "high"
			req.SessionID = "ignored-not-openai"
			return req
		}},
		{name: "openai_defaults", openai: true, req: func(u string) *ai.Request {
			m := model(u, "")
			m.Reasoning = true
			req := userReq(m, "hi")
			req.ThinkingLevel = "xhigh"
			req.SessionID = "sess-9"
			req.Tools = tools[:1]
			return req
		}},
		{name: "openai_conversation", openai: true, req: func(u string) *ai.Request {
			m := model(u, `{"supportsStore":false}`)
			req := userReq(m, "")
			req.Messages = conversation("openai")
			req.MaxTokens = 7
			return req
		}},
		{name: "no_images", req: func(u string) *ai.Request {
			m := model(u, "")
			m.Input = []string{"text"}
			m.MaxTokens = 0
			req := userReq(m, "")
			req.SystemPrompt = ""
			req.Messages = conversation("openai")
			return req
		}},
	}
}

// The request bodies of Chat Completions, byte for byte (stream, key
// order, escaping, extra members and where they go).
func TestCompletionsRequestBodies(t *testing.T) {
	for _, tc := range completionsCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, serveSSE(t, "completions_text.sse"))
			var rec recorder
			msg := NewCompletions(nil).Stream(withTimeout(t), tc.req(srv.URL+"/v1"), rec.emit)
			if tc.openai {
				// The same request to "api.openai.com", dialled to the
				// local server, to get OpenAI's own defaults.
				msg = NewCompletions(dialTo(srv)).Stream(withTimeout(t), tc.req("http://api.openai.com/v1"), rec.emit)
			}
			if msg.StopReason != ai.StopStop {
				t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
			}
			req := srv.reqs[len(srv.reqs)-1]
			got := req.Raw
			if tc.openai && len(srv.reqs) != 2 {
				t.Fatalf("%d requests", len(srv.reqs))
			}
			path := filepath.Join("testdata", "requests", "completions_"+tc.name+".json")
			if testenv.Update(t, *updateRequests) { // then compared like any other run
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body differs from %s:\n got %s\nwant %s", path, got, want)
			}
		})
	}
}

// The headers of a Chat Completions request: JSON in and out, the model's
// headers over the defaults, the key as a bearer token over any model
// header, no Authorization without a key.
func TestCompletionsRequestHeaders(t *testing.T) {
	for _, key := range []string{"sk-test-123", ""} {
		srv := newServer(t, serveSSE(t, "completions_text.sse"))
		req := userReq(testModel(APICompletions, srv.URL+"/v1"), "x")
		req.APIKey = key
		req.Model.Headers = map[string]string{"X-Custom": "yes", "Accept": "text/event-stream", "Authorization": "Bearer model-header"}
		var rec recorder
		if msg := NewCompletions(nil).Stream(withTimeout(t), req, rec.emit); msg.StopReason != ai.StopStop {
			t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
		}
		h := srv.only(t).Header
		wantAuth := "Bearer model-header"
		if key != "" {
			wantAuth = "Bearer " + key
		}
		for k, want := range map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream", "X-Custom": "yes", "Authorization": wantAuth, "User-Agent": "pisces"} {
			if got := h.Get(k); got != want {
				t.Errorf("key %q: %s: %q, want %q", key, k, got, want)
			}
		}
	}
}

// Paths are resolved against the base URL as the SDK resolves them (here
// compared with the SDK's Responses service, which still sends its own
// requests).
func TestEndpointMatchesSDK(t *testing.T) {
	for _, base := range []string{
		"http://h", "http://h/", "http://h/v1", "http://h/v1/", "http://h:8080/v1", "http://h/v1?api-version=1",
		"https://h/openai/deployments/d", "http://h/a%2Fb/v1", "http://user:pw@h/v1#frag", "http://[::1]:9/v1",
	} {
		var sdkURL string
		svc := responses.NewResponseService(option.WithBaseURL(base), option.WithMaxRetries(0),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				sdkURL = r.URL.String()
				return nil, errors.New("not sent")
			}))
		_, _ = svc.New(context.Background(), responses.ResponseNewParams{})
		got, err := endpoint(base, "responses")
		if err != nil || got != sdkURL {
			t.Errorf("%s: %q (%v), SDK %q", base, got, err, sdkURL)
		}
	}
}
