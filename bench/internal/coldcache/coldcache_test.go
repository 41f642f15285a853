package coldcache

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestDrop(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte("a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Drop(p)
	if runtime.GOOS == "linux" {
		if err != nil {
			t.Fatalf("Drop: %v", err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "a binary" {
			t.Fatalf("the file after Drop: %q, %v", b, err)
		}
	} else if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Drop on %s: %v, want errors.ErrUnsupported", runtime.GOOS, err)
	}
	if err := Drop(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Drop of a missing file succeeded")
	}
}
