package ai

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/fetch/fetchtest"
)

func TestInlineImageURLs(t *testing.T) {
	f := &fetchtest.Fetcher{Images: map[string]fetchtest.Image{
		"https://example.com/a.png": {MimeType: "image/png", Data: []byte("png-a")},
		"https://example.com/b.jpg": {MimeType: "image/jpeg", Data: []byte("jpg-b")},
	}}
	plain := &UserMessage{Role: RoleUser, Content: StringContent("no images")}
	inlineImg := &UserMessage{Role: RoleUser, Content: BlockContent(Text("data"), Image("AAAA", "image/gif"))}
	withURLs := &UserMessage{Role: RoleUser, Content: BlockContent(Text("two"), ImageURL("https://example.com/a.png"), ImageURL("https://example.com/b.jpg")), Timestamp: 7}
	result := &ToolResultMessage{Role: RoleToolResult, ToolCallID: "c1", Content: []Content{ImageURL("https://example.com/a.png")}}
	assistant := &AssistantMessage{Role: RoleAssistant, Content: []Content{Text("hi")}}
	msgs := []Message{plain, inlineImg, withURLs, assistant, result}
	before, _ := json.Marshal(msgs)

	got, err := InlineImageURLs(context.Background(), f, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(msgs); string(after) != string(before) {
		t.Errorf("the messages given were changed:\n%s\n%s", before, after)
	}
	for i, m := range []Message{plain, inlineImg, assistant} {
		idx := []int{0, 1, 3}[i]
		if got[idx] != m {
			t.Errorf("message %d without image URLs was copied", idx)
		}
	}
	wantUser := `{"role":"user","content":[{"type":"text","text":"two"},{"type":"image","data":"cG5nLWE=","mimeType":"image/png"},{"type":"image","data":"anBnLWI=","mimeType":"image/jpeg"}],"timestamp":7}`
	if b, _ := json.Marshal(got[2]); string(b) != wantUser {
		t.Errorf("user message:\n got %s\nwant %s", b, wantUser)
	}
	wantResult := `[{"type":"image","data":"cG5nLWE=","mimeType":"image/png"}]`
	if b, _ := json.Marshal(got[4].(*ToolResultMessage).Content); string(b) != wantResult {
		t.Errorf("tool result content:\n got %s\nwant %s", b, wantResult)
	}
	if calls := f.Calls(); !reflect.DeepEqual(calls, []string{"https://example.com/a.png", "https://example.com/b.jpg"}) {
		t.Errorf("fetched %v, want each URL once", calls)
	}
}

func TestInlineImageURLsFailure(t *testing.T) {
	f := &fetchtest.Fetcher{}
	msgs := []Message{&UserMessage{Role: RoleUser, Content: BlockContent(ImageURL("https://example.com/missing.png"))}}
	_, err := InlineImageURLs(context.Background(), f, msgs)
	if err == nil || err.Error() != "cannot fetch image https://example.com/missing.png: the server answered 404 Not Found" {
		t.Fatalf("error = %v", err)
	}
}

func TestInlineRequestImagesWithoutURLs(t *testing.T) {
	req := &Request{Messages: []Message{&UserMessage{Role: RoleUser, Content: StringContent("x")}}}
	f := &fetchtest.Fetcher{}
	got, err := InlineRequestImages(context.Background(), f, req)
	if err != nil || got != req || len(f.Calls()) != 0 {
		t.Errorf("a request without image URLs: %p %v, %d fetches; want the same request", got, err, len(f.Calls()))
	}
}

func TestPassImageURLs(t *testing.T) {
	for _, c := range []struct {
		base, compat string
		want         bool
	}{
		{"https://api.openai.com/v1", "", true},
		{"https://API.OpenAI.com/v1", "", true},
		{"http://localhost:11434/v1", "", false},
		{"https://openrouter.ai/api/v1", "", false},
		{"https://api.openai.com.evil.example/v1", "", false},
		{"https://api.openai.com/v1", `{"supportsImageUrls": false}`, false},
		{"http://localhost:8000/v1", `{"supportsImageUrls": true, "supportsStore": false}`, true},
		{"http://localhost:8000/v1", `{"supportsStore": false}`, false},
	} {
		m := &Model{Compat: json.RawMessage(c.compat)}
		if got := PassImageURLs(m, c.base, "api.openai.com"); got != c.want {
			t.Errorf("PassImageURLs(%s, compat %s) = %v, want %v", c.base, c.compat, got, c.want)
		}
	}
}

func TestImageURLBlockJSON(t *testing.T) {
	var c Content
	if err := json.Unmarshal([]byte(`{"type":"image","url":"https://example.com/x.png"}`), &c); err != nil {
		t.Fatal(err)
	}
	if !c.IsImageURL() || c.URL != "https://example.com/x.png" || c.Data != "" || len(c.Extra) != 0 {
		t.Errorf("decoded %+v", c)
	}
	if Image("AA", "image/png").IsImageURL() || Text("x").IsImageURL() {
		t.Error("IsImageURL holds for a block without URL")
	}
	for _, fast := range []bool{true, false} {
		SetReflectOnly(!fast)
		b, err := ImageURL("https://example.com/x.png?a=1&b=<2>").MarshalJSON()
		SetReflectOnly(false)
		if err != nil || string(b) != `{"type":"image","url":"https://example.com/x.png?a=1&b=<2>"}` {
			t.Errorf("fast=%v: %s %v", fast, b, err)
		}
	}
}

// A URL that fails in an older message becomes a note; in the latest user
// message (and the tool results after it) it fails the call.
func TestInlineImageURLsOlderFailuresBecomeNotes(t *testing.T) {
	f := &fetchtest.Fetcher{Images: map[string]fetchtest.Image{"https://example.com/ok.png": {MimeType: "image/png", Data: []byte("ok")}}}
	bad := "https://example.com/gone.png"
	older := &UserMessage{Role: RoleUser, Content: BlockContent(Text("first"), ImageURL(bad))}
	failed := &AssistantMessage{Role: RoleAssistant, StopReason: StopError, ErrorMessage: "cannot fetch image"}
	latest := &UserMessage{Role: RoleUser, Content: BlockContent(Text("try this"), ImageURL("https://example.com/ok.png"))}

	got, err := InlineImageURLs(context.Background(), f, []Message{older, failed, latest})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":[{"type":"text","text":"first"},{"type":"text","text":"[cannot fetch image https://example.com/gone.png: the server answered 404 Not Found]"}],"timestamp":0}`
	if b, _ := json.Marshal(got[0]); string(b) != want {
		t.Errorf("older message:\n got %s\nwant %s", b, want)
	}
	if b, _ := json.Marshal(got[2]); !strings.Contains(string(b), `"data":"b2s="`) {
		t.Errorf("latest message %s", b)
	}

	// The same URL in the latest message, or in a tool result after it.
	for _, last := range []Message{
		&UserMessage{Role: RoleUser, Content: BlockContent(ImageURL(bad))},
		&ToolResultMessage{Role: RoleToolResult, Content: []Content{ImageURL(bad)}},
	} {
		_, err = InlineImageURLs(context.Background(), f, []Message{older, latest, last})
		if err == nil || err.Error() != "cannot fetch image "+bad+": the server answered 404 Not Found" {
			t.Errorf("%T last: error %v", last, err)
		}
	}
}

func TestInlineImageURLsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msgs := []Message{
		&UserMessage{Role: RoleUser, Content: BlockContent(ImageURL("https://example.com/a.png"))},
		&UserMessage{Role: RoleUser, Content: StringContent("latest")},
	}
	if _, err := InlineImageURLs(ctx, &fetchtest.Fetcher{}, msgs); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled (an abort is not a note)", err)
	}
}
