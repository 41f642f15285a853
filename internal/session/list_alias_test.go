package session

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A session with exactly one text: its AllMessagesText must not alias the
// read buffer, which the listing reuses for the next file (a listing once
// showed another session's bytes there).
func TestListSingleTextNotAliased(t *testing.T) {
	ClearListCache()
	t.Cleanup(ClearListCache)
	dir := t.TempDir()
	want := map[string]string{}
	for i := range 64 {
		text := fmt.Sprintf("only text of session %02d", i)
		role := "user"
		if i%2 == 1 {
			role = "assistant" // not the first user message: not cloned as FirstMessage
		}
		p := filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", i))
		data := fmt.Sprintf(`{"type":"session","version":3,"id":"id%02d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"+
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}],"timestamp":1767225601000}}`+"\n", i, role, text)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		want[p] = text
	}
	infos, err := List(dir, "")
	if err != nil || len(infos) != len(want) {
		t.Fatalf("%d infos, %v", len(infos), err)
	}
	for _, in := range infos {
		if in.AllMessagesText != want[in.Path] {
			t.Errorf("%s: AllMessagesText %q, want %q", filepath.Base(in.Path), in.AllMessagesText, want[in.Path])
		}
	}
}
