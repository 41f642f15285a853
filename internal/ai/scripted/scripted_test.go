package scripted

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch/fetchtest"
)

func stream(t *testing.T, p *Provider, ctx context.Context) ([]ai.AssistantEvent, *ai.AssistantMessage) {
	t.Helper()
	var evs []ai.AssistantEvent
	m := p.Stream(ctx, &ai.Request{Model: p.Model()}, func(e ai.AssistantEvent) { evs = append(evs, e) })
	return evs, m
}

func types(evs []ai.AssistantEvent) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}

func TestTurnsReplayInOrder(t *testing.T) {
	p, err := Parse([]byte(`{"chunkSize":2,"turns":[
		{"content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hello"}],"usage":{"input":3,"output":4}},
		{"content":[{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]},
		{"error":{"status":529,"message":"overloaded"}}]}`), "t")
	if err != nil {
		t.Fatal(err)
	}
	evs, m := stream(t, p, context.Background())
	if got := types(evs); got != "start,thinking_start,thinking_delta,thinking_delta,thinking_end,text_start,text_delta,text_delta,text_delta,text_end,done" {
		t.Fatalf("events %s", got)
	}
	if m.StopReason != ai.StopStop || m.Content[1].Text != "hello" || m.Content[0].Thinking != "hmm" {
		t.Fatalf("message %+v", m)
	}
	if m.Usage.TotalTokens != 7 {
		t.Fatalf("usage %+v", m.Usage)
	}
	if evs[len(evs)-2].Usage.TotalTokens != 0 {
		t.Fatalf("usage must be as it stands at each event")
	}
	_, m = stream(t, p, context.Background())
	if m.StopReason != ai.StopToolUse || m.Content[0].ID != "call_2_1" || string(m.Content[0].Arguments) != `{"command":"ls"}` {
		t.Fatalf("tool turn %+v", m)
	}
	_, m = stream(t, p, context.Background())
	if m.StopReason != ai.StopError || m.ErrorMessage != "529 overloaded" {
		t.Fatalf("error turn %+v", m)
	}
	_, m = stream(t, p, context.Background())
	if m.StopReason != ai.StopError || !strings.Contains(m.ErrorMessage, "no turn left for request 4 (the script has 3 turns)") {
		t.Fatalf("exhausted %+v", m)
	}
}

func TestCancelEndsWithAborted(t *testing.T) {
	p, _ := Parse([]byte(`{"turns":[{"content":[{"type":"text","text":"abc"}],"hang":true}]}`), "t")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the text is out and the turn hangs.
	var evs []ai.AssistantEvent
	m := p.Stream(ctx, &ai.Request{Model: p.Model()}, func(e ai.AssistantEvent) {
		evs = append(evs, e)
		if e.Type == ai.EvTextEnd {
			cancel()
		}
	})
	if m.StopReason != ai.StopAborted || m.Content[0].Text != "abc" {
		t.Fatalf("message %+v", m)
	}
	if evs[len(evs)-1].Type != ai.EvError || evs[len(evs)-1].Reason != ai.StopAborted {
		t.Fatalf("last event %+v", evs[len(evs)-1])
	}
}

func TestBadScriptsAreRefused(t *testing.T) {
	for in, want := range map[string]string{
		`{"turns":[{}]}`: "turn 1 has neither content nor error",
		`{"turns":[{"content":[{"type":"image"}]}]}`:      `unknown type "image"`,
		`{"turns":[{"content":[{"type":"toolCall"}]}]}`:   "toolCall needs a name",
		`{"turns":[],"bogus":1}`:                          "bogus",
		`{"turns":[{"content":[{"type":"text"}],"x":1}]}`: `unknown field "x"`,
	} {
		_, err := Parse([]byte(in), "s.json")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestChunks(t *testing.T) {
	p, _ := Parse([]byte(`{"turns":[{"content":[{"type":"text","text":"abcdef"}],"chunks":["a","bcd","ef"]}]}`), "t")
	evs, _ := stream(t, p, context.Background())
	var deltas []string
	for _, e := range evs {
		if e.Type == ai.EvTextDelta {
			deltas = append(deltas, e.Delta)
		}
	}
	if strings.Join(deltas, "|") != "a|bcd|ef" {
		t.Fatalf("deltas %v", deltas)
	}
}

func imageRequest(p *Provider, url string) *ai.Request {
	return &ai.Request{Model: p.Model(), Messages: []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("look"), ai.ImageURL(url), ai.Image("QUJD", "image/gif"))},
	}}
}

func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Without fetchImages the request keeps the URL; the log shows it.
func TestImagesInRequestLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "req.jsonl")
	p, err := Parse([]byte(`{"requestLog":`+strconv.Quote(log)+`,"turns":[{"content":[{"type":"text","text":"a cat"}]}]}`), "t")
	if err != nil {
		t.Fatal(err)
	}
	f := &fetchtest.Fetcher{}
	p.Images = f
	if m := p.Stream(context.Background(), imageRequest(p, "https://example.com/cat.png"), nil); m.StopReason != ai.StopStop {
		t.Fatalf("message %+v", m)
	}
	got, _ := json.Marshal(readLog(t, log)[0]["images"])
	if string(got) != `[{"url":"https://example.com/cat.png"},{"bytes":3,"mimeType":"image/gif"}]` {
		t.Errorf("logged images %s", got)
	}
	if len(f.Calls()) != 0 {
		t.Errorf("fetched %v without fetchImages", f.Calls())
	}
}

func TestFetchImages(t *testing.T) {
	log := filepath.Join(t.TempDir(), "req.jsonl")
	p, err := Parse([]byte(`{"fetchImages":true,"requestLog":`+strconv.Quote(log)+`,"turns":[{"content":[{"type":"text","text":"a cat"}]}]}`), "t")
	if err != nil {
		t.Fatal(err)
	}
	p.Images = &fetchtest.Fetcher{Images: map[string]fetchtest.Image{"https://example.com/cat.png": {MimeType: "image/png", Data: []byte("12345")}}}

	// A failed fetch fails the request and takes no turn.
	m := p.Stream(context.Background(), imageRequest(p, "https://example.com/missing.png"), nil)
	if m.StopReason != ai.StopError || m.ErrorMessage != "cannot fetch image https://example.com/missing.png: the server answered 404 Not Found" {
		t.Fatalf("message %+v", m)
	}
	if p.Remaining() != 1 {
		t.Errorf("a failed fetch took a turn")
	}
	if m := p.Stream(context.Background(), imageRequest(p, "https://example.com/cat.png"), nil); m.StopReason != ai.StopStop {
		t.Fatalf("message %+v", m)
	}
	entries := readLog(t, log)
	if len(entries) != 1 {
		t.Fatalf("%d requests logged, want 1", len(entries))
	}
	got, _ := json.Marshal(entries[0]["images"])
	if string(got) != `[{"bytes":5,"mimeType":"image/png"},{"bytes":3,"mimeType":"image/gif"}]` {
		t.Errorf("logged images %s", got)
	}
}
