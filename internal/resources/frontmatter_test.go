package resources

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeFiles creates files (relative path → content) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSplitFrontmatter(t *testing.T) {
	cases := []struct {
		in, header, body string
		ok               bool
	}{
		{"---\na: 1\n---\nbody\n", "a: 1\n", "body\n", true},
		{"\ufeff---\r\na: 1\r\n---\r\nbody\r\n", "a: 1\n", "body\n", true},
		{"---\na: 1\n---", "a: 1\n", "", true},
		{"---\n---\nbody", "", "body", true},
		{"no header\n---\n", "", "no header\n---\n", false},
		{"---\nunterminated\n", "", "---\nunterminated\n", false},
		{"--- \na: 1\n--- \nx", "", "--- \na: 1\n--- \nx", false},
	}
	for _, c := range cases {
		h, b, ok := SplitFrontmatter(c.in)
		if h != c.header || b != c.body || ok != c.ok {
			t.Errorf("SplitFrontmatter(%q) = %q, %q, %v; want %q, %q, %v", c.in, h, b, ok, c.header, c.body, c.ok)
		}
	}
}

func TestParseYAMLSubset(t *testing.T) {
	src := `# a comment
name: my-skill
description: "Quoted: with \"escapes\" and \u00e9"
single: 'it''s'
plain: value # trailing comment
hash: a#b
flag: true
off: no
count: 42
ratio: 1.5
nothing: null
empty:
flow: [a, "b, c", 'd']
multiflow: [one,
  two]
block:
  - x
  - "y z"
  -
top:
- p
- q
globs: *.ts, *.tsx
nested:
  inner: 1
  deeper: yes
literal: |
  line one
    indented
  line three
folded: >-
  folded one
  folded two

  new para
url: http://example.com/a:b
"quoted key": v
`
	fm := ParseYAMLSubset(src)
	want := Frontmatter{
		"name":        "my-skill",
		"description": `Quoted: with "escapes" and é`,
		"single":      "it's",
		"plain":       "value",
		"hash":        "a#b",
		"flag":        true,
		"off":         false,
		"count":       int64(42),
		"ratio":       1.5,
		"nothing":     nil,
		"empty":       nil,
		"flow":        []any{"a", "b, c", "d"},
		"multiflow":   []any{"one", "two"},
		"block":       []any{"x", "y z", nil},
		"top":         []any{"p", "q"},
		"globs":       "*.ts, *.tsx",
		"nested":      map[string]any{"inner": int64(1), "deeper": true},
		"literal":     "line one\n  indented\nline three\n",
		"folded":      "folded one folded two\nnew para",
		"url":         "http://example.com/a:b",
		"quoted key":  "v",
	}
	for k, v := range want {
		if got, ok := fm[k]; !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, v)
		}
	}
	if len(fm) != len(want) {
		t.Errorf("got %d keys, want %d: %#v", len(fm), len(want), fm)
	}
}

func TestFrontmatterAccessors(t *testing.T) {
	fm := ParseYAMLSubset("a: [x, 2, true]\nb: one\nc: \"true\"\nd: 3\n")
	if got := fm.Strings("a"); !reflect.DeepEqual(got, []string{"x", "2", "true"}) {
		t.Errorf("Strings(a) = %v", got)
	}
	if got := fm.Strings("b"); !reflect.DeepEqual(got, []string{"one"}) {
		t.Errorf("Strings(b) = %v", got)
	}
	if fm.Strings("missing") != nil {
		t.Error("Strings(missing) not nil")
	}
	if !fm.Bool("c", false) || fm.Bool("b", false) || !fm.Bool("missing", true) {
		t.Error("Bool")
	}
	if fm.String("d") != "3" || fm.String("a") != "x, 2, true" || fm.String("missing") != "" {
		t.Errorf("String: %q %q", fm.String("d"), fm.String("a"))
	}
}

func TestParseFrontmatterGarbage(t *testing.T) {
	// Broken lines are skipped, never fatal.
	fm, body := ParseFrontmatter("---\n: nokey\njust text\n[broken\nok: 1\nq: \"unterminated\n---\nbody")
	if fm["ok"] != int64(1) || body != "body" {
		t.Errorf("fm = %#v, body %q", fm, body)
	}
}

func TestYAMLEscapesAndContinuation(t *testing.T) {
	fm := ParseYAMLSubset("re: \":\\s*any\\b\"\nesc: \"a\\\\b\\/c\\td\"\ndescription: a long\n  description goes on\n    and on # comment\nnext: x\n")
	if got := fm.String("re"); got != ":\\s*any\b" {
		t.Errorf("re = %q", got)
	}
	if got := fm.String("esc"); got != "a\\b/c\td" {
		t.Errorf("esc = %q", got)
	}
	if got := fm.String("description"); got != "a long description goes on and on" {
		t.Errorf("description = %q", got)
	}
	if fm.String("next") != "x" {
		t.Errorf("next = %q", fm.String("next"))
	}
}
