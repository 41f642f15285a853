package google

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Any response body: the stream decoder does not panic and leaves a
// consistent message (one that encodes, deltas only into blocks that were
// started, each text and thinking block holding exactly its deltas).
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"error":{"code":400,"message":"bad"}}` + "\n"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true},{\"functionCall\":{\"name\":\"f\",\"args\":{\"x\":1}}},{\"text\":\"b\"}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var evs []ai.AssistantEvent
		b := ai.NewBuilder(testModel("http://127.0.0.1", "gemini-2.5-flash"), "high", func(ev ai.AssistantEvent) { evs = append(evs, ev) })
		b.Start()
		msg := readStream(context.Background(), bytes.NewReader(body), b)
		if msg == nil || msg.StopReason == "" {
			t.Fatalf("no final message: %+v", msg)
		}
		if out, err := json.Marshal(msg); err != nil || !json.Valid(out) {
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
	})
}
