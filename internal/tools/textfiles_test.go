package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// buffers is an editor's view of files: what it holds wins over the disk.
type buffers struct {
	mu    sync.Mutex
	files map[string]string
}

func (b *buffers) textFiles() *TextFiles {
	return &TextFiles{
		Read: func(_ context.Context, abs string) (string, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			if s, ok := b.files[abs]; ok {
				return s, nil
			}
			return "", fs.ErrNotExist
		},
		Write: func(_ context.Context, abs, text string) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.files[abs] = text
			return nil
		},
	}
}

func joined(r Result) string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "")
}

func TestTextFilesServeTheTools(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(disk, []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &buffers{files: map[string]string{disk: "unsaved line one\nline two\n"}}
	env := Env{Cwd: dir, Files: b.textFiles()}

	if got := joined(run(t, env, "read", map[string]any{"path": "a.txt", "offset": 2})); !strings.Contains(got, "line two") || strings.Contains(got, "on disk") {
		t.Errorf("read gave %q, want the editor's buffer from line 2", got)
	}
	res := run(t, env, "edit", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "unsaved", "newText": "edited"}}})
	if res.IsError {
		t.Fatalf("edit: %s", joined(res))
	}
	if b.files[disk] != "edited line one\nline two\n" {
		t.Errorf("buffer after edit %q", b.files[disk])
	}
	res = run(t, env, "write", map[string]any{"path": "sub/new.txt", "content": "fresh"})
	if res.IsError || b.files[filepath.Join(dir, "sub", "new.txt")] != "fresh" {
		t.Errorf("write: %s, buffers %v", joined(res), b.files)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write went to the disk too: %v", err)
	}
	if d, _ := os.ReadFile(disk); string(d) != "on disk\n" {
		t.Errorf("the disk changed: %q", d)
	}
	// A file the editor does not hold is read from the disk.
	other := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(other, []byte("only on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := joined(run(t, env, "read", map[string]any{"path": "b.txt"})); !strings.Contains(got, "only on disk") {
		t.Errorf("read of a file the editor lacks: %q", got)
	}
}
