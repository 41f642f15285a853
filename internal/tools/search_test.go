package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchTree builds a small project with ignore files, hidden files and a
// .git directory.
func searchTree(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, ".gitignore", "*.log\nbuild/\n/rootonly.txt\n!keep.log\n")
	writeFile(t, dir, ".git/config", "needle in git\n")
	writeFile(t, dir, ".hidden/secret.txt", "needle hidden\n")
	writeFile(t, dir, ".env", "needle=dotfile\n")
	writeFile(t, dir, "main.go", "package main\n\n// needle one\nfunc main() {}\n")
	writeFile(t, dir, "debug.log", "needle ignored log\n")
	writeFile(t, dir, "keep.log", "needle kept log\n")
	writeFile(t, dir, "build/out.txt", "needle in build\n")
	writeFile(t, dir, "rootonly.txt", "needle root only\n")
	writeFile(t, dir, "sub/rootonly.txt", "needle sub rootonly\n")
	writeFile(t, dir, "sub/.gitignore", "generated.go\n")
	writeFile(t, dir, "sub/generated.go", "needle generated\n")
	writeFile(t, dir, "sub/lib.go", "package sub\nvar Needle = 1 // needle two\n")
	writeFile(t, dir, "other/generated.go", "needle not ignored here\n")
	if err := os.WriteFile(filepath.Join(dir, "bin.dat"), []byte("needle\x00binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGrepIgnoresAndHidden(t *testing.T) {
	dir := searchTree(t)
	got := mustText(t, run(t, Env{Cwd: dir}, "grep", map[string]any{"pattern": "needle"}))
	want := []string{
		".env:1: needle=dotfile",
		".hidden/secret.txt:1: needle hidden",
		"keep.log:1: needle kept log",
		"main.go:3: // needle one",
		"other/generated.go:1: needle not ignored here",
		"sub/lib.go:2: var Needle = 1 // needle two",
		"sub/rootonly.txt:1: needle sub rootonly",
	}
	if got != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestGrepOptions(t *testing.T) {
	dir := searchTree(t)
	env := Env{Cwd: dir}
	got := mustText(t, run(t, env, "grep", map[string]any{"pattern": "NEEDLE = 1", "ignoreCase": true, "path": "sub"}))
	if got != "lib.go:2: var Needle = 1 // needle two" {
		t.Fatalf("ignoreCase/path: %q", got)
	}
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "needle", "glob": "*.go"}))
	if got != "main.go:3: // needle one\nother/generated.go:1: needle not ignored here\nsub/lib.go:2: var Needle = 1 // needle two" {
		t.Fatalf("glob: %q", got)
	}
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "needle", "glob": "sub/**/*.go"}))
	if got != "sub/lib.go:2: var Needle = 1 // needle two" {
		t.Fatalf("path glob: %q", got)
	}
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "a.n", "literal": true}))
	if got != "No matches found" {
		t.Fatalf("literal: %q", got)
	}
	writeFile(t, dir, "lit.txt", "x a.n y\nxaxny\n")
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "a.n", "literal": true}))
	if got != "lit.txt:1: x a.n y" {
		t.Fatalf("literal: %q", got)
	}
	// a file path prints its base name
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "func", "path": "main.go"}))
	if got != "main.go:4: func main() {}" {
		t.Fatalf("file path: %q", got)
	}
	// context lines
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "needle one", "context": 1}))
	if got != "main.go-2- \nmain.go:3: // needle one\nmain.go-4- func main() {}" {
		t.Fatalf("context: %q", got)
	}
	wantError(t, run(t, env, "grep", map[string]any{"pattern": "x", "path": "nope"}), "Path not found: "+filepath.Join(dir, "nope"))
	r := run(t, env, "grep", map[string]any{"pattern": "(unclosed"})
	if !r.IsError || !strings.HasPrefix(text(r), "regex parse error: ") {
		t.Fatalf("bad regex: %+v", r)
	}
}

func TestGrepLimits(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	var b strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	writeFile(t, dir, "many.txt", b.String())
	r := run(t, env, "grep", map[string]any{"pattern": "match"})
	got := mustText(t, r)
	if strings.Count(got, "\nmany.txt:") != 99 || !strings.HasSuffix(got, "many.txt:100: match 100\n\n[100 matches limit reached. Use limit=200 for more, or refine pattern]") {
		t.Fatalf("limit: %q", got[len(got)-120:])
	}
	if d := decodeDetails(t, r); d["matchLimitReached"] != float64(100) {
		t.Fatalf("details %v", d)
	}
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "match", "limit": 5}))
	if !strings.HasSuffix(got, "many.txt:5: match 5\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]") {
		t.Fatalf("limit 5: %q", got)
	}
	// long lines are cut
	writeFile(t, dir, "long.txt", "zz"+strings.Repeat("é", 600)+"\n")
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "zz"}))
	want := "long.txt:1: zz" + strings.Repeat("é", 498) + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"
	if got != want {
		t.Fatalf("long line: %q", got)
	}
	// output over 50KB
	b.Reset()
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "big %s\n", strings.Repeat("q", 400))
	}
	writeFile(t, dir, "big.txt", b.String())
	got = mustText(t, run(t, env, "grep", map[string]any{"pattern": "big", "limit": 1000}))
	if !strings.HasSuffix(got, "\n\n[50.0KB limit reached]") || len(got) > DEFAULT_MAX_BYTES+100 {
		t.Fatalf("bytes: %d %q", len(got), got[len(got)-60:])
	}
}

func TestFind(t *testing.T) {
	dir := searchTree(t)
	env := Env{Cwd: dir}
	got := mustText(t, run(t, env, "find", map[string]any{"pattern": "*.go"}))
	if got != "main.go\nother/generated.go\nsub/lib.go" {
		t.Fatalf("*.go: %q", got)
	}
	got = mustText(t, run(t, env, "find", map[string]any{"pattern": "*.txt"}))
	if got != ".hidden/secret.txt\nsub/rootonly.txt" {
		t.Fatalf("*.txt: %q", got)
	}
	got = mustText(t, run(t, env, "find", map[string]any{"pattern": "**/*.go", "path": "sub"}))
	if got != "lib.go" {
		t.Fatalf("path: %q", got)
	}
	got = mustText(t, run(t, env, "find", map[string]any{"pattern": "sub/*"}))
	if got != "sub/.gitignore\nsub/lib.go\nsub/rootonly.txt" {
		t.Fatalf("sub/*: %q", got)
	}
	got = mustText(t, run(t, env, "find", map[string]any{"pattern": "s*"}))
	if got != ".hidden/secret.txt\nsub/" {
		t.Fatalf("dirs: %q", got)
	}
	if got := mustText(t, run(t, env, "find", map[string]any{"pattern": "*.rs"})); got != "No files found matching pattern" {
		t.Fatalf("none: %q", got)
	}
	got = mustText(t, run(t, env, "find", map[string]any{"pattern": "*", "limit": 2}))
	if got != ".env\n.gitignore\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]" {
		t.Fatalf("limit: %q", got)
	}
	wantError(t, run(t, env, "find", map[string]any{"pattern": "*", "path": "nope"}), "Path not found: "+filepath.Join(dir, "nope"))
	wantError(t, run(t, env, "find", map[string]any{"pattern": "*", "path": "main.go"}), "Not a directory: "+filepath.Join(dir, "main.go"))
}

func TestFindParentGitignore(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".git/HEAD", "ref\n")
	writeFile(t, dir, ".gitignore", "*.tmp\nsub/skip/\n")
	writeFile(t, dir, "sub/a.tmp", "")
	writeFile(t, dir, "sub/a.txt", "")
	writeFile(t, dir, "sub/skip/b.txt", "")
	got := mustText(t, run(t, Env{Cwd: dir}, "find", map[string]any{"pattern": "*", "path": "sub"}))
	if got != "a.txt" {
		t.Fatalf("got %q", got)
	}
}

func TestLs(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	if got := mustText(t, run(t, env, "ls", map[string]any{})); got != "(empty directory)" {
		t.Fatalf("empty: %q", got)
	}
	for _, n := range []string{"b.txt", "A.txt", ".dot", "c/x", "D/y", "node_modules/z"} {
		writeFile(t, dir, n, "")
	}
	writeFile(t, dir, ".gitignore", "node_modules\n")
	got := mustText(t, run(t, env, "ls", map[string]any{}))
	if got != ".dot\n.gitignore\nA.txt\nb.txt\nc/\nD/\nnode_modules/" {
		t.Fatalf("ls: %q", got)
	}
	got = mustText(t, run(t, env, "ls", map[string]any{"path": "c"}))
	if got != "x" {
		t.Fatalf("ls c: %q", got)
	}
	r := run(t, env, "ls", map[string]any{"limit": 3})
	if got := mustText(t, r); got != ".dot\n.gitignore\nA.txt\n\n[3 entries limit reached. Use limit=6 for more]" {
		t.Fatalf("limit: %q", got)
	}
	if d := decodeDetails(t, r); d["entryLimitReached"] != float64(3) {
		t.Fatalf("details %v", d)
	}
	wantError(t, run(t, env, "ls", map[string]any{"path": "nope"}), "Path not found: "+filepath.Join(dir, "nope"))
	wantError(t, run(t, env, "ls", map[string]any{"path": "b.txt"}), "Not a directory: "+filepath.Join(dir, "b.txt"))
}

func TestGlobToRegexp(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "a/b.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"src/**/*.ts", "src/a.ts", true},
		{"src/**/*.ts", "src/x/y/a.ts", true},
		{"src/**/*.ts", "lib/src/a.ts", false},
		{"a/**", "a/b/c", true},
		{"?.txt", "a.txt", true},
		{"[ab].txt", "b.txt", true},
		{"[!ab].txt", "b.txt", false},
		{`\*.txt`, "*.txt", true},
	}
	for _, c := range cases {
		re, err := globToRegexp(c.glob, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(c.path); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
}
