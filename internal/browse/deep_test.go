package browse

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/session"
)

// writeChain writes a linear session of n entries straight to a file: the
// four message kinds in turn, and every 1,000th entry a label of its
// parent (hidden in the browse view).
func writeChain(t testing.TB, n int) *session.Session {
	t.Helper()
	b := make([]byte, 0, n*330)
	b = append(b, `{"type":"session","version":3,"id":"deep","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u"}`+"\n"...)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const usage = `"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`
	id := func(b []byte, i int) []byte { return fmt.Appendf(b, "e%07d", i) }
	for i := 0; i < n; i++ {
		head := func(b []byte, typ string) []byte {
			b = append(b, `{"type":"`+typ+`","id":"`...)
			b = id(b, i)
			b = append(b, `","parentId":`...)
			if i == 0 {
				b = append(b, "null"...)
			} else {
				b = append(b, '"')
				b = id(b, i-1)
				b = append(b, '"')
			}
			b = append(b, `,"timestamp":"`...)
			b = t0.Add(time.Duration(i)*time.Millisecond).AppendFormat(b, "2006-01-02T15:04:05.000Z")
			return append(b, '"')
		}
		switch {
		case i%1000 == 999:
			b = head(b, "label")
			b = append(b, `,"targetId":"`...)
			b = id(b, i-1)
			b = fmt.Appendf(b, `","label":"L%d"}`, i)
		case i%4 == 0:
			b = head(b, "message")
			b = fmt.Appendf(b, `,"message":{"role":"user","content":"question %d","timestamp":1}}`, i)
		case i%4 == 1:
			b = head(b, "message")
			b = fmt.Appendf(b, `,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"bash","arguments":{"command":"ls %d"}}],%s,"stopReason":"toolUse","timestamp":1}}`, i, i, usage)
		case i%4 == 2:
			b = head(b, "message")
			b = fmt.Appendf(b, `,"message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1}}`, i-1)
		default:
			b = head(b, "message")
			b = fmt.Appendf(b, `,"message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}],%s,"stopReason":"stop","timestamp":1}}`, i, usage)
		}
		b = append(b, '\n')
	}
	path := filepath.Join(t.TempDir(), "deep.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != n {
		t.Fatalf("%d entries", s.Len())
	}
	return s
}

// maxDepth returns the deepest nesting of a JSON text, checking that
// brackets balance outside strings (the small-tree tests check the
// writer's output against encoding/json; this checks the shape at depth).
func maxDepth(t *testing.T, data []byte) int {
	t.Helper()
	var stack []byte
	most := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			stack = append(stack, c)
			most = max(most, len(stack))
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				t.Fatalf("unbalanced JSON at %d", i)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unbalanced JSON: %d open", len(stack))
	}
	return most
}

// A 100000-entry linear chain: every form is built and encoded with a
// small stack limit (a recursive walk would need megabytes), the nested
// JSON is valid and as deep as the chain, and the flat forms chain each
// node to the one before.
func TestDeepChain100k(t *testing.T) {
	const n = 100_000
	s := writeChain(t, n)

	old := debug.SetMaxStack(1 << 20)
	defer debug.SetMaxStack(old)

	plain := SessionTree(s, TreeOptions{})
	out := marshal(t, plain)
	var streamed strings.Builder
	if n, err := plain.WriteTo(&streamed); err != nil || n != int64(len(out)) || streamed.String() != out {
		t.Errorf("WriteTo: %d bytes, %v; differs: %v", n, err, streamed.String() != out)
	}
	if got := strings.Count(out, `"children":[`); got != n {
		t.Errorf("plain: %d nodes", got)
	}
	if d := maxDepth(t, []byte(out)); d < 2*n {
		t.Errorf("plain depth %d", d)
	}
	if !strings.HasPrefix(out, `{"leafId":"e0099999","nodes":[{"entry":{"id":"e0000000","parentId":null,"type":"message"`) {
		t.Errorf("plain starts %s", out[:200])
	}

	browse := SessionTree(s, TreeOptions{View: ViewBrowse, Home: "/home/u"})
	out = marshal(t, browse)
	visible := n - n/1000
	if got := strings.Count(out, `"children":[`); got != visible {
		t.Errorf("browse: %d nodes, want %d", got, visible)
	}
	if *browse.LeafID != "e0099998" { // the last entry is a label
		t.Errorf("browse leaf %s", *browse.LeafID)
	}
	if !strings.Contains(out, `"id":"e0001000","parentId":"e0000998"`) {
		t.Errorf("browse: the child of a label is not re-parented")
	}
	if !strings.Contains(out, `"preview":"[bash: ls 99997]"`) {
		t.Errorf("browse: last tool result not resolved")
	}
	maxDepth(t, []byte(out))

	for _, view := range []string{ViewDefault, ViewBrowse} {
		flat := SessionTree(s, TreeOptions{View: view, Flat: true})
		var back struct {
			Nodes []FlatNode `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(marshal(t, flat)), &back); err != nil {
			t.Fatal(err)
		}
		prev := ""
		for i, node := range back.Nodes {
			p := ""
			if node.Entry.ParentID != nil {
				p = *node.Entry.ParentID
			}
			if p != prev {
				t.Fatalf("view %q node %d: parent %q, want %q", view, i, p, prev)
			}
			prev = node.Entry.ID
		}
	}

	rawRes := RawTree(s, false)
	raw := marshal(t, rawRes)
	streamed.Reset()
	if _, err := rawRes.WriteTo(&streamed); err != nil || streamed.String() != raw {
		t.Errorf("raw WriteTo differs")
	}
	if got := strings.Count(raw, `"children":[`); got != n {
		t.Errorf("raw: %d nodes", got)
	}
	maxDepth(t, []byte(raw))
	var rawFlat struct {
		Tree   []RawNode `json:"tree"`
		LeafID string    `json:"leafId"`
	}
	if err := json.Unmarshal([]byte(marshal(t, RawTree(s, true))), &rawFlat); err != nil {
		t.Fatal(err)
	}
	if len(rawFlat.Tree) != n || rawFlat.LeafID != "e0099999" || *rawFlat.Tree[n-1].ParentID != "e0099998" {
		t.Errorf("raw flat: %d nodes, leaf %s", len(rawFlat.Tree), rawFlat.LeafID)
	}
	if rawFlat.Tree[999].Label != "" || rawFlat.Tree[998].Label != "L999" {
		t.Errorf("raw flat labels: %q %q", rawFlat.Tree[998].Label, rawFlat.Tree[999].Label)
	}
}
