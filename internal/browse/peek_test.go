package browse

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
)

// peekPieces are text pieces that make the cut of a long text fall on
// escapes and multi-byte characters.
var peekPieces = []string{"a", "word ", "\n", "\t", "\"", "\\", "\x01", "é", "日本", "😀", "\u2028", "<&>", "/"}

func peekText(r *rand.Rand) string {
	var b strings.Builder
	n := 700 + r.IntN(600) // around the cut (6*140+24 bytes of JSON)
	if r.IntN(4) == 0 {
		n = r.IntN(200)
	}
	for b.Len() < n {
		b.WriteString(peekPieces[r.IntN(len(peekPieces))])
	}
	return b.String()
}

// The plain view's previews read without decoding the messages are the
// previews of the decoded messages.
func TestPeekedPreviewsMatchDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var lines []string
	lines = append(lines, `{"type":"session","version":3,"id":"019cf3a0-0000-7000-8000-0000000000bb","timestamp":"2026-03-15T22:40:00.000Z","cwd":"/tmp/p"}`)
	parent := "null"
	for i := 0; i < 3000; i++ {
		var m ai.Message
		blocks := func() []ai.Content {
			var out []ai.Content
			for n := r.IntN(4); n > 0; n-- {
				switch r.IntN(3) {
				case 0:
					out = append(out, ai.Text(peekText(r)))
				case 1:
					out = append(out, ai.Content{Type: ai.ContentThinking, Thinking: peekText(r)})
				default:
					out = append(out, ai.Content{Type: ai.ContentToolCall, ID: "c", Name: "bash", Arguments: []byte(`{"command":"ls"}`)})
				}
			}
			return out
		}
		switch r.IntN(4) {
		case 0:
			m = &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(peekText(r)), Timestamp: 1}
		case 1:
			m = &ai.UserMessage{Role: ai.RoleUser, Content: ai.UserContent{Blocks: blocks()}, Timestamp: 1}
		case 2:
			m = &ai.AssistantMessage{Role: ai.RoleAssistant, Content: blocks(), StopReason: "stop", Timestamp: 1}
		default:
			m = &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c", ToolName: []string{"", "bash", "é\n"}[r.IntN(3)], Content: blocks(), Timestamp: 1}
		}
		raw, err := ai.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("%08x", i)
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-15T22:40:00.000Z","message":%s}`, id, parent, raw))
		parent = string(jsonx.MustMarshal(id))
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "peek.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := sessgen.WriteFile(dir, sessgen.Options{Entries: 2000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, g} {
		s, _, err := session.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var peek session.TextPeek
		peeked := 0
		for _, e := range s.Entries() {
			if e.Type != session.TypeMessage {
				continue
			}
			if e.PeekText(&peek, plainPreviewLen) {
				peeked++
			}
			got, gok := plainPreview(e, &peek)
			want, wok := messagePreview(e.Message())
			if got != want || gok != wok {
				t.Fatalf("%s: preview %q %v, decoded %q %v", e.ID, got, gok, want, wok)
			}
		}
		if peeked < 1000 {
			t.Errorf("%s: only %d messages peeked", f, peeked)
		}
	}
}
