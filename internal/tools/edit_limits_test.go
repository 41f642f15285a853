package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit holds the whole file in memory, so it refuses files over its limit
// (by their size, before reading them) with a message that says what to do.
func TestEditRefusesFilesOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, editMaxBytes+1); err != nil {
		t.Fatal(err)
	}
	r, _ := within(t, context.Background(), Env{Cwd: dir}, "edit", map[string]any{"path": "big.txt", "edits": []map[string]string{{"oldText": "needle", "newText": "pin"}}})
	wantError(t, r, "File too large to edit: big.txt is 10.0MB (10485761 bytes), over edit's limit of 10.0MB (10485760 bytes). Use bash (sed, or a script) to change it.")

	// at the limit it still works, one byte over it is refused
	defer func(n int64) { editMaxBytes = n }(editMaxBytes)
	editMaxBytes = 1000
	writeFile(t, dir, "small.txt", "needle\n"+strings.Repeat("x", 993))
	r, _ = within(t, context.Background(), Env{Cwd: dir}, "edit", map[string]any{"path": "small.txt", "edits": []map[string]string{{"oldText": "needle", "newText": "pin"}}})
	if got := mustText(t, r); got != "Successfully replaced 1 block(s) in small.txt." {
		t.Fatalf("got %q", got)
	}
	writeFile(t, dir, "small.txt", "needle\n"+strings.Repeat("x", 994))
	r, _ = within(t, context.Background(), Env{Cwd: dir}, "edit", map[string]any{"path": "small.txt", "edits": []map[string]string{{"oldText": "needle", "newText": "pin"}}})
	wantError(t, r, "File too large to edit: small.txt is 1001B (1001 bytes), over edit's limit of 1000B (1000 bytes). Use bash (sed, or a script) to change it.")
}
