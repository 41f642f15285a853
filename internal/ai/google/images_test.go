package google

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch/fetchtest"
)

// Gemini takes image bytes: image URLs are fetched and sent as inlineData,
// even for a model whose compat claims URL support.
func TestImageURLsInlined(t *testing.T) {
	for _, compat := range []string{"", `{"supportsImageUrls": true}`} {
		srv := newServer(t, sseFile(t, "text.sse"))
		m := testModel(srv.URL, "gemini-2.5-flash")
		if compat != "" {
			m.Compat = json.RawMessage(compat)
		}
		req := simpleRequest(m)
		req.Messages = []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(
			ai.Text("compare"), ai.ImageURL("https://example.com/a.webp"), ai.ImageURL("https://example.com/a.webp"))}}
		f := &fetchtest.Fetcher{Images: map[string]fetchtest.Image{"https://example.com/a.webp": {MimeType: "image/webp", Data: []byte("RIFF")}}}
		rec := &recorder{}
		msg := (&Provider{Images: f}).Stream(context.Background(), req, rec.emit)
		checkFinal(t, rec, msg)
		if msg.StopReason != ai.StopStop {
			t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
		}
		if n := len(f.Calls()); n != 1 {
			t.Errorf("%d fetches, want 1", n)
		}
		assertJSON(t, srv.last(t).Body["contents"], `[{"role": "user", "parts": [{"text": "compare"},
			{"inlineData": {"mimeType": "image/webp", "data": "UklGRg=="}},
			{"inlineData": {"mimeType": "image/webp", "data": "UklGRg=="}}]}]`)
	}
}

func TestImageURLFetchFailure(t *testing.T) {
	srv := newServer(t, sseFile(t, "text.sse"))
	req := simpleRequest(testModel(srv.URL, "gemini-2.5-flash"))
	req.Messages = []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.ImageURL("https://example.com/gone.png"))}}
	rec := &recorder{}
	msg := (&Provider{Images: &fetchtest.Fetcher{}}).Stream(context.Background(), req, rec.emit)
	checkFinal(t, rec, msg)
	if msg.StopReason != ai.StopError || msg.ErrorMessage != "cannot fetch image https://example.com/gone.png: the server answered 404 Not Found" {
		t.Errorf("stop %q message %q", msg.StopReason, msg.ErrorMessage)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.reqs) != 0 {
		t.Errorf("the server got %d requests", len(srv.reqs))
	}
}
