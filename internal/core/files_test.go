package core

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Export writes through a fresh temporary file: a symbolic link planted
// where a fixed "<out>.tmp" would be is not followed.
func TestExportIgnoresPlantedTemporaryLink(t *testing.T) {
	s, dir := newTestSession(t, `{"turns":[{"content":[{"type":"text","text":"hi"}]}]}`)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.html")
	if err := os.Symlink(victim, out+".tmp"); err != nil {
		t.Fatal(err)
	}
	path, err := s.ExportHTML(out)
	if err != nil || path != out {
		t.Fatalf("%q %v", path, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("victim overwritten: %.60q", b)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "<html") {
		t.Fatalf("export: %.60q", b)
	}
}

// A session moved to the trash never replaces what is there, not even a
// dangling symbolic link of the same name.
func TestDeleteSessionKeepsTrashEntries(t *testing.T) {
	s, dir := newTestSession(t, `{"turns":[]}`)
	sessions := filepath.Join(dir, "agent", "sessions", "--x--")
	trash := filepath.Join(dir, "agent", "trash")
	for _, d := range []string{sessions, trash} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(sessions, "a.jsonl")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(trash, "a.jsonl")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), planted); err != nil {
		t.Fatal(err)
	}
	dst, err := s.DeleteSession(file)
	if err != nil {
		t.Fatal(err)
	}
	if dst == planted || filepath.Dir(dst) != trash || !strings.HasSuffix(dst, "_a.jsonl") {
		t.Fatalf("moved to %s", dst)
	}
	if fi, err := os.Lstat(planted); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("trash entry replaced: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "{}\n" {
		t.Fatalf("moved content %q", b)
	}
	if _, err := os.Lstat(file); err == nil {
		t.Fatal("session file still there")
	}
}
