package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 || read(t, p) != "one" {
		t.Fatalf("new file: %v %q", fi.Mode(), read(t, p))
	}
	// An existing file keeps its permission bits.
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 || read(t, p) != "two" {
		t.Fatalf("replaced: %v %q", fi.Mode(), read(t, p))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// A symbolic link planted where a fixed temporary name would be is neither
// followed nor replaced.
func TestWritePlantedTemporaryLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "out.html")
	for _, name := range []string{p + ".tmp", filepath.Join(dir, ".out.html.tmp")} {
		if err := os.Symlink(victim, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(p, []byte("page"), 0o644); err != nil {
		t.Fatal(err)
	}
	if read(t, victim) != "precious" || read(t, p) != "page" {
		t.Fatalf("victim %q, out %q", read(t, victim), read(t, p))
	}
}

// Writing through a symbolic link replaces its target; the link stays.
func TestWriteThroughLink(t *testing.T) {
	dots := t.TempDir()
	target := filepath.Join(dots, "settings.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink("../"+filepath.Base(dots)+"/settings.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v %v", fi.Mode(), err)
	}
	if fi, _ := os.Stat(target); read(t, target) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("target %q %v", read(t, target), fi.Mode())
	}
	// A link to a missing file creates that file.
	missing := filepath.Join(dots, "missing.json")
	link2 := filepath.Join(dir, "m.json")
	if err := os.Symlink(missing, link2); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link2, []byte("x"), 0o600); err != nil || read(t, missing) != "x" {
		t.Fatalf("dangling: %v", err)
	}
	// A loop is an error.
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if err := WriteFile(a, nil, 0o600); err == nil {
		t.Fatal("loop written")
	}
}

func TestWriteFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || read(t, p) != "old" {
		t.Fatalf("%v %q", err, read(t, p))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestMoveNoReplace(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("s"), 0o644)
	// An existing file, and a dangling link, are never replaced.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("f"), 0o644)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for _, dst := range []string{file, dangling} {
		if err := MoveNoReplace(src, dst); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("%s: %v", dst, err)
		}
	}
	if read(t, src) != "s" || read(t, file) != "f" {
		t.Fatal("changed")
	}
	if _, err := os.Lstat(dangling); err != nil {
		t.Fatal("link replaced")
	}
	dst := filepath.Join(dir, "dst")
	if err := MoveNoReplace(src, dst); err != nil || read(t, dst) != "s" {
		t.Fatalf("move: %v", err)
	}
	if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("source kept")
	}
}
