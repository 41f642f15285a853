package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/pisces-agent/pisces/internal/ai"
)

// decodeBody runs the stream decoder over body as Stream does over the
// response, recording the events.
func decodeBody(body []byte) (*ai.AssistantMessage, []ai.AssistantEvent) {
	var evs []ai.AssistantEvent
	b := ai.NewBuilder(testModel("http://127.0.0.1"), "high", func(ev ai.AssistantEvent) { evs = append(evs, ev) })
	b.Start()
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	st := newStreamState(b)
	for stream.Next() {
		st.handle(stream.Current())
		if st.stopped {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return b.Fail(context.Background(), &ai.ProviderError{Message: err.Error()}), evs
	}
	return st.finish(context.Background()), evs
}

// checkStream checks what a decoded stream must satisfy whatever the
// input: a final message that encodes, deltas only into blocks that were
// started, and each text and thinking block holding exactly its deltas.
func checkStream(t *testing.T, msg *ai.AssistantMessage, evs []ai.AssistantEvent) {
	t.Helper()
	if msg == nil || msg.StopReason == "" {
		t.Fatalf("no final message: %+v", msg)
	}
	if b, err := json.Marshal(msg); err != nil || !json.Valid(b) {
		t.Fatalf("the final message does not encode: %v", err)
	}
	started := map[int]bool{}
	deltas := map[int]*strings.Builder{}
	for _, ev := range evs {
		switch ev.Type {
		case ai.EvTextStart, ai.EvThinkingStart, ai.EvToolCallStart:
			started[ev.ContentIndex] = true
		case ai.EvTextDelta, ai.EvThinkingDelta, ai.EvToolCallDelta:
			if !started[ev.ContentIndex] {
				t.Fatalf("%s into block %d, which was not started", ev.Type, ev.ContentIndex)
			}
			if deltas[ev.ContentIndex] == nil {
				deltas[ev.ContentIndex] = &strings.Builder{}
			}
			deltas[ev.ContentIndex].WriteString(ev.Delta)
		}
	}
	for i, c := range msg.Content {
		var got string
		if d := deltas[i]; d != nil {
			got = d.String()
		}
		switch {
		case c.Type == ai.ContentText && c.Text != got:
			t.Fatalf("block %d holds %q, its deltas %q", i, c.Text, got)
		case c.Type == ai.ContentThinking && !c.Redacted && c.Thinking != got:
			t.Fatalf("block %d thinks %q, its deltas %q", i, c.Thinking, got)
		}
	}
}

// Any response body: the stream decoder does not panic and leaves a
// consistent message.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, evs := decodeBody(body)
		checkStream(t, msg, evs)
	})
}
