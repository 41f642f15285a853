package core

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/resources"
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

// Trust follows the session's directory: a new session in another project
// has that project's decision; an undecided one is untrusted until
// ResolveTrust asks through the installed TrustAsk.
func TestTrustPerDirectory(t *testing.T) {
	s, dir := newTestSession(t, `{"turns":[]}`)
	b := filepath.Join(dir, "b")
	if err := os.MkdirAll(filepath.Join(b, ".pisces"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, ".pisces", "APPEND_SYSTEM.md"), []byte("B-APPEND"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	s.SetTrustAsk(func(_ context.Context, project string) (bool, bool) {
		asked = append(asked, project)
		return true, true
	})
	prompt := func() string { text, _ := s.systemPrompt(nil); return text }

	if err := s.NewSessionIn(b, ""); err != nil {
		t.Fatal(err)
	}
	if s.Cwd() != b || s.Trusted() || strings.Contains(prompt(), "B-APPEND") {
		t.Fatalf("before the answer: cwd %s, trusted %v", s.Cwd(), s.Trusted())
	}
	if d := s.ResolveTrust(context.Background()); !d.Trusted || d.Source != resources.TrustFromAnswer || len(asked) != 1 || asked[0] != b {
		t.Fatalf("decision %+v, asked %v", d, asked)
	}
	if !s.Trusted() || !strings.Contains(prompt(), "B-APPEND") {
		t.Fatal("the answer did not apply")
	}

	// Back in the first directory (nothing project-local), then in b again:
	// the remembered answer applies at once.
	if err := s.NewSessionIn(dir, ""); err != nil || s.Trusted() {
		t.Fatalf("back: %v, trusted %v", err, s.Trusted())
	}
	if err := s.NewSessionIn(b, ""); err != nil || !s.Trusted() || len(asked) != 1 {
		t.Fatalf("b again: %v, trusted %v, asked %v", err, s.Trusted(), asked)
	}

	// Nobody to ask: an undecided project stays untrusted.
	c := filepath.Join(dir, "c")
	if err := os.MkdirAll(filepath.Join(c, ".pisces", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c, ".pisces", "prompts", "x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.SetTrustAsk(nil)
	if err := s.NewSessionIn(c, ""); err != nil {
		t.Fatal(err)
	}
	if d := s.ResolveTrust(context.Background()); d.Trusted || d.Source != resources.TrustCannotAsk || s.Trusted() {
		t.Fatalf("no one to ask: %+v", d)
	}

	missing := filepath.Join(dir, "missing")
	if err := s.NewSessionIn(missing, ""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing directory: %v", err)
	}
}
