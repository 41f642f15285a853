package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// strOrSkip reads what str(c.raw()) read, and leaves the cursor where it
// did.
func TestStrOrSkipMatchesRawStr(t *testing.T) {
	vals := []string{
		`"plain"`, `""`, `"esc \" \\ \/ \n \u00e9"`, `"\ud83d\ude00"`, `"lone \udc00"`,
		"\"raw \xff\xfe\"", "\"ctl \x01\"", `"bad \x"`, `"unterminated`, `123`, `null`,
		`{"o":[1,2]}`, `[`, `tru`, `"é"`, `-1.5e3`,
	}
	for _, v := range vals {
		line := []byte(v + `,"next":1}`)
		a, b := &cur{b: line}, &cur{b: line}
		raw := a.raw()
		want, _ := str(raw)
		got := strOrSkip(b)
		if got != want || a.i != b.i || a.bad != b.bad {
			t.Errorf("%q: got %q at %d (bad %v), want %q at %d (bad %v)", v, got, b.i, b.bad, want, a.i, a.bad)
		}
	}
}

// sessionFiles builds each path as filepath.Join(dir, name) did.
func TestSessionFilesPaths(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "d.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.jsonl", "..jsonl", "b.txt", "c.jsonl"} {
		if err := os.WriteFile(filepath.Join(sub, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(dir string) {
		t.Helper()
		got, err := sessionFiles(dir)
		if err != nil {
			t.Fatalf("%q: %v", dir, err)
		}
		slices.Sort(got)
		var want []string
		if des, err := os.ReadDir(dir); err == nil {
			for _, de := range des {
				if strings.HasSuffix(de.Name(), ".jsonl") && !de.IsDir() {
					want = append(want, filepath.Join(dir, de.Name()))
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", dir, got, want)
		}
	}
	t.Chdir(root)
	for _, dir := range []string{sub, sub + "/", sub + "/./", root + "/sub/../sub", "sub", "./sub/", "sub/x/..", filepath.Join(root, "missing")} {
		check(dir)
	}
	t.Chdir(sub)
	check("")
	check(".")
	check("..")
}
