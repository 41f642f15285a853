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
			if e.PeekText(&peek, plainPreviewLen, false) {
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

// Both views of a session whose messages are read from its lines give the
// answer they give when every message is decoded (the same session with
// its messages written so that they are not taken verbatim).
func TestPeekedTreesMatchDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var lines []string
	lines = append(lines, `{"type":"session","version":3,"id":"019cf3a0-0000-7000-8000-0000000000cc","timestamp":"2026-03-15T22:40:00.000Z","cwd":"/home/u/proj"}`)
	var ids []string
	calls := 0
	for i := 0; i < 2000; i++ {
		var m ai.Message
		switch r.IntN(4) {
		case 0:
			m = &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(peekText(r)), Timestamp: 1}
		case 1:
			m = &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(peekText(r)), ai.Text(peekText(r))), Timestamp: 1}
		case 2:
			a := &ai.AssistantMessage{Role: ai.RoleAssistant, StopReason: []string{"stop", "toolUse", "aborted", "error"}[r.IntN(4)], Timestamp: 1}
			if a.StopReason == "error" {
				a.ErrorMessage = "HTTP 500\n" + peekText(r)
				if r.IntN(20) == 0 {
					// A tail too long for its place to be noted.
					a.ErrorMessage += strings.Repeat("x", 70000)
				}
			}
			for n := r.IntN(3); n > 0; n-- {
				switch r.IntN(3) {
				case 0:
					a.Content = append(a.Content, ai.Text(peekText(r)))
				case 1:
					a.Content = append(a.Content, ai.Content{Type: ai.ContentThinking, Thinking: peekText(r)})
				default:
					calls++
					a.Content = append(a.Content, ai.Content{Type: ai.ContentToolCall, ID: fmt.Sprintf("call_%d", calls%50), Name: []string{"bash", "read", "edit"}[r.IntN(3)],
						Arguments: jsonx.MustMarshal(map[string]string{"command": peekPieces[r.IntN(len(peekPieces))] + "ls", "path": "/home/u/proj/a.go"})})
				}
			}
			m = a
		default:
			m = &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: fmt.Sprintf("call_%d", r.IntN(60)), ToolName: "bash", Content: []ai.Content{ai.Text(peekText(r))}, Timestamp: 1}
		}
		raw, err := ai.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("%08x", i)
		parent := "null"
		if len(ids) > 0 {
			parent = `"` + ids[max(0, len(ids)-1-r.IntN(3))] + `"` // side branches
		}
		ids = append(ids, id)
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-15T22:40:%02d.000Z","message":%s}`, id, parent, i%60, raw))
	}
	dir := t.TempDir()
	verbatim := filepath.Join(dir, "verbatim.jsonl")
	decoded := filepath.Join(dir, "decoded.jsonl")
	text := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(verbatim, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A space after the role: the same messages, not taken verbatim.
	if err := os.WriteFile(decoded, []byte(strings.ReplaceAll(text, `"message":{"role":`, `"message":{"role": `)), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _, err := session.Open(verbatim)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := session.Open(decoded)
	if err != nil {
		t.Fatal(err)
	}
	var peek session.TextPeek
	if e := a.Entries()[5]; !e.PeekText(&peek, 1, true) {
		t.Fatal("the verbatim session is not read verbatim")
	}
	if e := b.Entries()[5]; e.PeekText(&peek, 1, true) {
		t.Fatal("the other session is read verbatim")
	}
	for _, o := range []TreeOptions{{}, {Flat: true}, {View: ViewBrowse, Home: "/home/u"}, {View: ViewBrowse, Flat: true, Home: "/home/u"}} {
		ta, tb := SessionTree(a, o), SessionTree(b, o)
		ja, jb := ta.AppendJSON(nil), tb.AppendJSON(nil)
		if string(ja) != string(jb) {
			i := 0
			for i < len(ja) && i < len(jb) && ja[i] == jb[i] {
				i++
			}
			t.Fatalf("%+v: trees differ at %d:\n peeked  %.200s\n decoded %.200s", o, i, ja[max(0, i-60):], jb[max(0, i-60):])
		}
	}
}
