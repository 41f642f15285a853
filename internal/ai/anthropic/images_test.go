package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch/fetchtest"
)

func imageURLRequest(baseURL string) *ai.Request {
	req := simpleRequest(baseURL)
	req.Messages = []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("What is this?"), ai.ImageURL("https://example.com/cat.png"))},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: API, Provider: "anthropic", Model: req.Model.ID, StopReason: ai.StopStop,
			Content: []ai.Content{ai.Text("A cat.")}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("And again?"), ai.ImageURL("https://example.com/cat.png"))},
	}
	return req
}

func stream(p *Provider, req *ai.Request) *ai.AssistantMessage {
	return p.Stream(context.Background(), req, nil)
}

// Anthropic's API fetches URL image sources itself: the URL goes through.
func TestImageURLPassedAsURLSource(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := imageURLRequest(srv.URL)
	req.Model.Compat = json.RawMessage(`{"supportsImageUrls": true}`) // the test server stands in for api.anthropic.com
	f := &fetchtest.Fetcher{}
	if m := stream(&Provider{Images: f}, req); m.StopReason != ai.StopStop {
		t.Fatalf("stop %q: %s", m.StopReason, m.ErrorMessage)
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("%d fetches; the URL should have been passed on", n)
	}
	jsonEq(t, "messages", c.last(t).Body["messages"], `[
	 {"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}}]},
	 {"role":"assistant","content":[{"type":"text","text":"A cat."}]},
	 {"role":"user","content":[{"type":"text","text":"And again?"},{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"},"cache_control":{"type":"ephemeral"}}]}
	]`)
}

// Other servers of the Messages API get the bytes, fetched once per URL.
func TestImageURLFetchedForOtherServers(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := imageURLRequest(srv.URL)
	f := &fetchtest.Fetcher{Images: map[string]fetchtest.Image{"https://example.com/cat.png": {MimeType: "image/png", Data: []byte("PNGDATA")}}}
	if m := stream(&Provider{Images: f}, req); m.StopReason != ai.StopStop {
		t.Fatalf("stop %q: %s", m.StopReason, m.ErrorMessage)
	}
	if calls := f.Calls(); len(calls) != 1 {
		t.Errorf("fetches %v, want the one URL once", calls)
	}
	jsonEq(t, "messages", c.last(t).Body["messages"], `[
	 {"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"UE5HREFUQQ=="}}]},
	 {"role":"assistant","content":[{"type":"text","text":"A cat."}]},
	 {"role":"user","content":[{"type":"text","text":"And again?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"UE5HREFUQQ=="},"cache_control":{"type":"ephemeral"}}]}
	]`)
	// The conversation keeps the URL.
	if u := req.Messages[0].(*ai.UserMessage).Content.Blocks[1]; u.URL != "https://example.com/cat.png" || u.Data != "" {
		t.Errorf("the request's message was changed: %+v", u)
	}
}

// A fetch that fails fails the request before anything is sent.
func TestImageURLFetchFailure(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	m := stream(&Provider{Images: &fetchtest.Fetcher{}}, imageURLRequest(srv.URL))
	if m.StopReason != ai.StopError || m.ErrorMessage != "cannot fetch image https://example.com/cat.png: the server answered 404 Not Found" {
		t.Errorf("stop %q message %q", m.StopReason, m.ErrorMessage)
	}
	if n := c.count(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}

// A model without image input drops images, so nothing is fetched.
func TestImageURLNotFetchedForTextOnlyModel(t *testing.T) {
	srv, c := sseServer(t, "text.sse")
	req := imageURLRequest(srv.URL)
	req.Model.Input = []string{"text"}
	f := &fetchtest.Fetcher{}
	if m := stream(&Provider{Images: f}, req); m.StopReason != ai.StopStop {
		t.Fatalf("stop %q: %s", m.StopReason, m.ErrorMessage)
	}
	if n := len(f.Calls()); n != 0 || c.count() != 1 {
		t.Errorf("%d fetches, %d requests", n, c.count())
	}
}

func TestPassImageURLsByServer(t *testing.T) {
	for base, want := range map[string]bool{
		"":                                 true,
		"https://api.anthropic.com":        true,
		"https://api.anthropic.com/":       true,
		"https://api.minimax.io/anthropic": false,
		"http://127.0.0.1:4000":            false,
	} {
		if got := passImageURLs(&ai.Model{BaseURL: base}); got != want {
			t.Errorf("passImageURLs(%q) = %v, want %v", base, got, want)
		}
	}
}
