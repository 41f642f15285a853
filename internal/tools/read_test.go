package tools

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	writeFile(t, dir, "a.txt", "one\ntwo\nthree\n")
	if got := mustText(t, run(t, env, "read", map[string]any{"path": "a.txt"})); got != "one\ntwo\nthree\n" {
		t.Fatalf("got %q", got)
	}
	got := mustText(t, run(t, env, "read", map[string]any{"path": "a.txt", "offset": 2, "limit": 1}))
	if got != "two\n\n[2 more lines in file. Use offset=3 to continue.]" {
		t.Fatalf("got %q", got)
	}
	if got := mustText(t, run(t, env, "read", map[string]any{"path": "@a.txt", "offset": 3})); got != "three\n" {
		t.Fatalf("@ prefix / offset: got %q", got)
	}
	wantError(t, run(t, env, "read", map[string]any{"path": "a.txt", "offset": 10}), "Offset 10 is beyond end of file (4 lines total)")
	abs := filepath.Join(dir, "missing.txt")
	wantError(t, run(t, env, "read", map[string]any{"path": "missing.txt"}), "ENOENT: no such file or directory, access '"+abs+"'")
	wantError(t, run(t, env, "read", map[string]any{"path": "."}), "EISDIR: illegal operation on a directory, read")
}

func TestReadHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, home, "h.txt", "home file")
	if got := mustText(t, run(t, Env{Cwd: t.TempDir()}, "read", map[string]any{"path": "~/h.txt"})); got != "home file" {
		t.Fatalf("got %q", got)
	}
}

func TestReadTruncation(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	var lines []string
	for i := 1; i <= 2500; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFile(t, dir, "long.txt", strings.Join(lines, "\n"))
	r := run(t, env, "read", map[string]any{"path": "long.txt"})
	got := mustText(t, r)
	if !strings.HasSuffix(got, "line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]") {
		t.Fatalf("tail: %q", got[len(got)-100:])
	}
	if d := decodeDetails(t, r); d["truncation"].(map[string]any)["truncatedBy"] != "lines" {
		t.Fatalf("details %v", d)
	}
	got = mustText(t, run(t, env, "read", map[string]any{"path": "long.txt", "offset": 2001}))
	if !strings.HasPrefix(got, "line 2001\n") || !strings.HasSuffix(got, "line 2500") {
		t.Fatalf("offset 2001: %q", got[:20])
	}

	// byte limit: 1000 lines of 100 bytes
	lines = nil
	for i := 0; i < 1000; i++ {
		lines = append(lines, strings.Repeat("x", 99))
	}
	writeFile(t, dir, "wide.txt", strings.Join(lines, "\n"))
	got = mustText(t, run(t, env, "read", map[string]any{"path": "wide.txt"}))
	// 512 lines of 100 bytes (incl. newline) fit in 51200 bytes minus one
	if !strings.HasSuffix(got, "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]") {
		t.Fatalf("bytes notice: %q", got[len(got)-90:])
	}

	// first line over the byte limit
	writeFile(t, dir, "big.txt", strings.Repeat("y", 60*1024)+"\nsecond")
	got = mustText(t, run(t, env, "read", map[string]any{"path": "big.txt"}))
	want := "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' big.txt | head -c 51200]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestReadImages(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	bmp := make([]byte, 40)
	copy(bmp, "BM")
	bmp[14] = 40
	images := map[string][]byte{
		"a.png":  append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, 1, 2, 3),
		"a.jpg":  {0xff, 0xd8, 0xff, 0xe0, 0, 1},
		"a.gif":  []byte("GIF89a\x01\x00"),
		"a.webp": []byte("RIFF\x10\x00\x00\x00WEBPVP8 "),
		"a.bmp":  bmp,
	}
	mimes := map[string]string{"a.png": "image/png", "a.jpg": "image/jpeg", "a.gif": "image/gif", "a.webp": "image/webp", "a.bmp": "image/bmp"}
	for name, data := range images {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, env, "read", map[string]any{"path": name})
		if r.IsError || len(r.Content) != 2 {
			t.Fatalf("%s: %+v", name, r)
		}
		if r.Content[0].Text != "Read image file ["+mimes[name]+"]" {
			t.Errorf("%s: text %q", name, r.Content[0].Text)
		}
		if r.Content[1].Type != "image" || r.Content[1].MimeType != mimes[name] || r.Content[1].Data != base64.StdEncoding.EncodeToString(data) {
			t.Errorf("%s: image block %+v", name, r.Content[1])
		}
	}
	// a text file that starts like a BMP is still text
	writeFile(t, dir, "bm.txt", "BMW is a car maker, not a bitmap header at all")
	if got := mustText(t, run(t, env, "read", map[string]any{"path": "bm.txt"})); !strings.HasPrefix(got, "BMW") {
		t.Fatalf("got %q", got)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	got := mustText(t, run(t, env, "write", map[string]any{"path": "a/b/c.txt", "content": "hello"}))
	if got != "Successfully wrote 5 bytes to a/b/c.txt" {
		t.Fatalf("got %q", got)
	}
	if readFile(t, filepath.Join(dir, "a/b/c.txt")) != "hello" {
		t.Fatal("content not written")
	}
	mustText(t, run(t, env, "write", map[string]any{"path": "a/b/c.txt", "content": "bye"}))
	if readFile(t, filepath.Join(dir, "a/b/c.txt")) != "bye" {
		t.Fatal("not overwritten")
	}
	abs := filepath.Join(dir, "abs.txt")
	mustText(t, run(t, Env{Cwd: "/"}, "write", map[string]any{"path": abs, "content": ""}))
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
}
