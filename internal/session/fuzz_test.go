package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Any bytes as a session file: Open does not panic, every entry it keeps is
// valid JSON, and the context and the tree build (the context encodes as
// JSON; the tree holds each entry at most once).
func FuzzOpen(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","id":"a","parentId":"a","timestamp":"x","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"b","parentId":"c","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"n","arguments":{}}],"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"t","content":[],"isError":false,"timestamp":3}}
{"type":"compaction","id":"d","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"zz","tokensBefore":9}
{"type":"context_edit","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:04.000Z","targetId":"a"}
{"type":"label","id":"f","parentId":"e","timestamp":"2025-01-01T00:00:05.000Z","targetId":"a","label":"L"}
`))
	// The file is written and read once per input: in memory when the
	// machine has a tmpfs (a disk makes fuzzing crawl).
	dir := f.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "pisces-fuzz"); err == nil {
		dir = d
		f.Cleanup(func() { os.RemoveAll(d) })
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, _, err := Open(path)
		if err != nil {
			return
		}
		defer s.Close()
		entries := s.Entries()
		for _, e := range entries {
			if !json.Valid(e.Raw) {
				t.Fatalf("kept entry is not valid JSON: %.200q", e.Raw)
			}
		}
		ctx := s.BuildContext()
		b, err := ai.Messages(ctx.Messages).MarshalJSON()
		if err != nil || !json.Valid(b) {
			t.Fatalf("the context does not encode: %v", err)
		}
		seen := map[*Entry]bool{}
		stack := s.Tree()
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[n.Entry] {
				t.Fatalf("entry %q twice in the tree", n.Entry.ID)
			}
			seen[n.Entry] = true
			stack = append(stack, n.Children...)
		}
		if len(seen) > len(entries) {
			t.Fatalf("%d tree nodes for %d entries", len(seen), len(entries))
		}
	})
}
