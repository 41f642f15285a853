package openai

import (
	"encoding/json"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch/fetchtest"
)

const catURL = "https://example.com/cat.png"

func catFetcher() *fetchtest.Fetcher {
	return &fetchtest.Fetcher{Images: map[string]fetchtest.Image{catURL: {MimeType: "image/png", Data: []byte("PNGDATA")}}}
}

// imageURLReq is a prompt with an image URL and a tool result that carries
// the same image.
func imageURLReq(model *ai.Model) *ai.Request {
	req := userReq(model, "")
	req.Messages = []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is this?"), ai.ImageURL(catURL))},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: model.API, Provider: "openai", Model: model.ID, StopReason: ai.StopToolUse,
			Content: []ai.Content{{Type: ai.ContentToolCall, ID: "call_1", Name: "look", Arguments: json.RawMessage(`{}`)}}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_1", ToolName: "look", Content: []ai.Content{ai.ImageURL(catURL)}},
	}
	return req
}

func TestCompletionsImageURLs(t *testing.T) {
	const data = "data:image/png;base64,UE5HREFUQQ=="
	for _, c := range []struct {
		name, compat, url string
		fetches           int
	}{
		// A local OpenAI-compatible server (Ollama, vLLM, ...) gets the bytes.
		{"fetched", ``, data, 1},
		// A server declared to fetch URLs itself gets the URL.
		{"passed", `{"supportsImageUrls": true}`, catURL, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, serveSSE(t, "completions_text.sse"))
			model := testModel(APICompletions, srv.URL+"/v1")
			if c.compat != "" {
				model.Compat = json.RawMessage(c.compat)
			}
			f := catFetcher()
			var rec recorder
			msg := (&Completions{Images: f}).Stream(withTimeout(t), imageURLReq(model), rec.emit)
			if msg.StopReason != ai.StopStop {
				t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
			}
			if n := len(f.Calls()); n != c.fetches {
				t.Errorf("%d fetches, want %d", n, c.fetches)
			}
			jsonEq(t, "messages", srv.only(t).Body["messages"], `[
				{"role":"system","content":"You are a test."},
				{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"`+c.url+`"}}]},
				{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"look","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"(see attached image)"},
				{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"`+c.url+`"}}]}]`)
		})
	}
}

func TestResponsesImageURLs(t *testing.T) {
	const data = "data:image/png;base64,UE5HREFUQQ=="
	for _, c := range []struct {
		name, compat, url string
		fetches           int
	}{
		{"fetched", ``, data, 1},
		{"passed", `{"supportsImageUrls": true}`, catURL, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, serveSSE(t, "responses_tools.sse"))
			model := testModel(APIResponses, srv.URL+"/v1")
			if c.compat != "" {
				model.Compat = json.RawMessage(c.compat)
			}
			f := catFetcher()
			var rec recorder
			msg := (&Responses{Images: f}).Stream(withTimeout(t), imageURLReq(model), rec.emit)
			if msg.StopReason == ai.StopError {
				t.Fatalf("error: %s", msg.ErrorMessage)
			}
			if n := len(f.Calls()); n != c.fetches {
				t.Errorf("%d fetches, want %d", n, c.fetches)
			}
			jsonEq(t, "input", srv.only(t).Body["input"], `[
				{"role":"system","content":"You are a test."},
				{"role":"user","content":[{"type":"input_text","text":"What is this?"},{"type":"input_image","detail":"auto","image_url":"`+c.url+`"}]},
				{"type":"function_call","call_id":"call_1","name":"look","arguments":"{}"},
				{"type":"function_call_output","call_id":"call_1","output":"(see attached image)"},
				{"role":"user","content":[{"type":"input_text","text":"Attached image(s) from tool result:"},{"type":"input_image","detail":"auto","image_url":"`+c.url+`"}]}]`)
		})
	}
}

// A failed fetch fails the turn with the fetcher's message; nothing is sent.
func TestImageURLFetchFailure(t *testing.T) {
	for _, p := range []ai.Provider{&Completions{Images: &fetchtest.Fetcher{}}, &Responses{Images: &fetchtest.Fetcher{}}} {
		srv := newServer(t, serveSSE(t, "completions_text.sse"))
		api := APICompletions
		if _, ok := p.(*Responses); ok {
			api = APIResponses
		}
		var rec recorder
		msg := p.Stream(withTimeout(t), imageURLReq(testModel(api, srv.URL)), rec.emit)
		providerError(t, msg)
		if msg.ErrorMessage != "cannot fetch image "+catURL+": the server answered 404 Not Found" {
			t.Errorf("%s: message %q", api, msg.ErrorMessage)
		}
		srv.mu.Lock()
		n := len(srv.reqs)
		srv.mu.Unlock()
		if n != 0 {
			t.Errorf("%s: the server got %d requests", api, n)
		}
	}
}

func TestPassImageURLsDefault(t *testing.T) {
	for base, want := range map[string]bool{
		"":                             true, // api.openai.com
		"https://api.openai.com/v1":    true,
		"http://localhost:11434/v1":    false,
		"https://openrouter.ai/api/v1": false,
	} {
		if got := passImageURLs(&ai.Model{BaseURL: base}); got != want {
			t.Errorf("passImageURLs(%q) = %v, want %v", base, got, want)
		}
	}
}
