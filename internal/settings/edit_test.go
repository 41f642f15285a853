package settings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setOnce writes before as the global settings file, calls Set and returns
// the file afterwards ("" when there is none). It fails the test when the
// in-place edit fell back to a full rewrite.
func setOnce(t *testing.T, before, path string, value any) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, FileName)
	if before != "\x00" {
		writeFile(t, file, before)
	}
	s := mustLoad(t, dir, "")
	if err := s.Set(Global, path, value); err != nil {
		t.Fatalf("Set(%q, %v): %v", path, value, err)
	}
	if before != "\x00" {
		if !inPlace(t, []byte(before), path, value) {
			t.Errorf("Set(%q, %v) on %q fell back to a full rewrite", path, value, before)
		}
	}
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	// The settings in memory are those of the file.
	if s2 := mustLoad(t, dir, ""); !sameSettings(s2.Raw(), s.Raw(), strings.Split(path, "."), value == nil) {
		t.Errorf("memory %v, file %v", s.Raw(), s2.Raw())
	}
	return string(data)
}

// inPlace reports whether editText manages the change without a rewrite.
func inPlace(t *testing.T, data []byte, path string, value any) bool {
	t.Helper()
	obj, err := parseObject(data)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(path, ".")
	norm := normalize(t, value)
	want := expandDotted(obj)
	setPath(want, parts, norm, value == nil)
	_, _, ok := editText(data, parts, norm, value == nil, want)
	return ok
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSetInPlace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, before, path string
		value              any
		after              string
	}{
		{
			name: "update keeps comments, blank lines and order",
			before: `// Pisces settings
{
  // the model
  "defaultModel": "a", // trailing note

  /* block */ "steeringMode": "all",
  "compaction": {
    "enabled": true // on
  }
}
`,
			path: "steeringMode", value: "one-at-a-time",
			after: `// Pisces settings
{
  // the model
  "defaultModel": "a", // trailing note

  /* block */ "steeringMode": "one-at-a-time",
  "compaction": {
    "enabled": true // on
  }
}
`,
		},
		{
			name:   "update nested",
			before: "{\n  \"compaction\": {\n    \"enabled\": true, // on\n    \"reserveTokens\": 1\n  }\n}\n",
			path:   "compaction.enabled", value: false,
			after: "{\n  \"compaction\": {\n    \"enabled\": false, // on\n    \"reserveTokens\": 1\n  }\n}\n",
		},
		{
			name:   "insert into existing object",
			before: "{\n  \"a\": 1,\n  \"compaction\": {\n    \"enabled\": true // on\n  }\n}\n",
			path:   "compaction.reserveTokens", value: 5,
			after: "{\n  \"a\": 1,\n  \"compaction\": {\n    \"enabled\": true, // on\n    \"reserveTokens\": 5\n  }\n}\n",
		},
		{
			name:   "insert into empty object",
			before: "{\n  \"compaction\": {},\n  \"b\": 2\n}\n",
			path:   "compaction.enabled", value: false,
			after: "{\n  \"compaction\": {\n    \"enabled\": false\n  },\n  \"b\": 2\n}\n",
		},
		{
			name:   "insert into empty file object",
			before: "{}",
			path:   "a", value: 1,
			after: "{\n  \"a\": 1\n}",
		},
		{
			name:   "insert into object holding only a comment",
			before: "{\n  // nothing yet\n}\n",
			path:   "a", value: 1,
			after: "{\n  // nothing yet\n  \"a\": 1\n}\n",
		},
		{
			name:   "insert at top level after trailing comma and comment",
			before: "{\n  \"a\": 1,\n  \"b\": 2, // last one\n  // \"c\": 3,\n}\n",
			path:   "d", value: "x",
			after: "{\n  \"a\": 1,\n  \"b\": 2, // last one\n  \"d\": \"x\",\n  // \"c\": 3,\n}\n",
		},
		{
			name:   "insert after last member with a comment and no comma",
			before: "{\n  \"a\": 1 /* one */ // note\n}\n",
			path:   "b", value: true,
			after: "{\n  \"a\": 1, /* one */ // note\n  \"b\": true\n}\n",
		},
		{
			name:   "nested path creation",
			before: "{\n  \"a\": 1\n}\n",
			path:   "task.budget.maxCostUsd", value: 5,
			after: "{\n  \"a\": 1,\n  \"task\": {\n    \"budget\": {\n      \"maxCostUsd\": 5\n    }\n  }\n}\n",
		},
		{
			name:   "nested path creation below an existing object",
			before: "{\n\t\"task\": {\n\t\t\"x\": 1\n\t}\n}\n",
			path:   "task.budget.maxCostUsd", value: 5,
			after: "{\n\t\"task\": {\n\t\t\"x\": 1,\n\t\t\"budget\": {\n\t\t\t\"maxCostUsd\": 5\n\t\t}\n\t}\n}\n",
		},
		{
			name:   "a value in the way is replaced",
			before: "{\n  \"task\": 3, // old\n  \"z\": 0\n}\n",
			path:   "task.budget", value: 1,
			after: "{\n  \"task\": {\n    \"budget\": 1\n  }, // old\n  \"z\": 0\n}\n",
		},
		{
			name:   "multi-line value indented to fit",
			before: "{\n  \"compaction\": {\n    \"enabled\": true\n  }\n}\n",
			path:   "compaction.enabled", value: map[string]any{"b": []int{1, 2}, "a": "<&>"},
			after: "{\n  \"compaction\": {\n    \"enabled\": {\n      \"a\": \"<&>\",\n      \"b\": [\n        1,\n        2\n      ]\n    }\n  }\n}\n",
		},
		{
			name:   "one-line object stays on one line",
			before: `{"a": 1, "b": {"c": 2}}`,
			path:   "b.d", value: []string{"x"},
			after: `{"a": 1, "b": {"c": 2, "d": ["x"]}}`,
		},
		{
			name:   "dotted key covering the path",
			before: "{\n  \"task.budget.maxCostUsd\": 3, // cap\n  \"a\": 1\n}\n",
			path:   "task.budget.maxCostUsd", value: 7,
			after: "{\n  \"task.budget.maxCostUsd\": 7, // cap\n  \"a\": 1\n}\n",
		},
		{
			name:   "dotted key covering a prefix",
			before: "{\n  \"task.budget\": {\n    \"maxTurns\": 3\n  }\n}\n",
			path:   "task.budget.maxCostUsd", value: 7,
			after: "{\n  \"task.budget\": {\n    \"maxTurns\": 3,\n    \"maxCostUsd\": 7\n  }\n}\n",
		},
		{
			name:   "dotted key wins over the nested member",
			before: "{\n  \"task\": {\"budget\": {\"maxCostUsd\": 1}},\n  \"task.budget.maxCostUsd\": 5\n}\n",
			path:   "task.budget.maxCostUsd", value: 9,
			after: "{\n  \"task\": {\"budget\": {\"maxCostUsd\": 1}},\n  \"task.budget.maxCostUsd\": 9\n}\n",
		},
		{
			name:   "a file of dotted keys gets another dotted key",
			before: "{\n  \"task.budget.maxCostUsd\": 3\n}\n",
			path:   "task.budget.maxTurns", value: 4,
			after: "{\n  \"task.budget.maxCostUsd\": 3,\n  \"task.budget.maxTurns\": 4\n}\n",
		},
		{
			name:   "an object value replaces shadowed members that would merge into it",
			before: "{\n  \"task\": {\"budget\": {\"x\": 1}},\n  \"task.budget\": 5\n}\n",
			path:   "task.budget", value: map[string]int{"y": 2},
			after: "{\n  \"task\": {},\n  \"task.budget\": {\n    \"y\": 2\n  }\n}\n",
		},
		{
			name:   "remove first member",
			before: "{\n  // a\n  \"a\": 1, // one\n  \"b\": 2,\n  \"c\": 3\n}\n",
			path:   "a", value: nil,
			after: "{\n  // a\n  \"b\": 2,\n  \"c\": 3\n}\n",
		},
		{
			name:   "remove middle member",
			before: "{\n  \"a\": 1,\n  \"b\": {\n    \"x\": 1\n  }, // bee\n  \"c\": 3\n}\n",
			path:   "b", value: nil,
			after: "{\n  \"a\": 1,\n  \"c\": 3\n}\n",
		},
		{
			name:   "remove last member",
			before: "{\n  \"a\": 1, // one\n  \"b\": 2\n  // end\n}\n",
			path:   "b", value: nil,
			after: "{\n  \"a\": 1 // one\n  // end\n}\n",
		},
		{
			name:   "remove last member with trailing commas",
			before: "{\n  \"a\": 1,\n  \"b\": 2,\n}\n",
			path:   "b", value: nil,
			after: "{\n  \"a\": 1,\n}\n",
		},
		{
			name:   "remove only member",
			before: "{\n  \"compaction\": {\n    \"enabled\": true\n  },\n  \"z\": 1\n}\n",
			path:   "compaction.enabled", value: nil,
			after: "{\n  \"compaction\": {},\n  \"z\": 1\n}\n",
		},
		{
			name:   "remove only member of the file",
			before: "{\n  \"a\": 1\n}\n",
			path:   "a", value: nil,
			after: "{}\n",
		},
		{
			name:   "remove on one line",
			before: `{"a": 1, "b": 2, "c": 3}`,
			path:   "c", value: nil,
			after: `{"a": 1, "b": 2}`,
		},
		{
			name:   "remove first on one line",
			before: `{"a": 1, "b": 2}`,
			path:   "a", value: nil,
			after: `{"b": 2}`,
		},
		{
			name:   "remove dotted and shadowed members",
			before: "{\n  \"task\": {\"budget\": {\"maxCostUsd\": 1}, \"x\": 2},\n  \"task.budget.maxCostUsd\": 5\n}\n",
			path:   "task.budget.maxCostUsd", value: nil,
			after: "{\n  \"task\": {\"budget\": {}, \"x\": 2}\n}\n",
		},
		{
			name:   "remove absent key writes nothing",
			before: "{ // keep\n  \"a\": 1\n}",
			path:   "b.c", value: nil,
			after: "{ // keep\n  \"a\": 1\n}",
		},
		{
			name:   "strings holding comment markers",
			before: "{\n  \"url\": \"http://x/*y*/\", // real\n  \"p\": \"/* not */\"\n}\n",
			path:   "q", value: "//",
			after: "{\n  \"url\": \"http://x/*y*/\", // real\n  \"p\": \"/* not */\",\n  \"q\": \"//\"\n}\n",
		},
		{
			name:   "update a string holding comment markers",
			before: "{\n  \"url\": \"http://x/*y*/\", // real\n  \"p\": \"/* not */\"\n}\n",
			path:   "url", value: "https://z//",
			after: "{\n  \"url\": \"https://z//\", // real\n  \"p\": \"/* not */\"\n}\n",
		},
		{
			name:   "CRLF kept",
			before: "{\r\n  // c\r\n  \"a\": 1 // one\r\n}\r\n",
			path:   "b.c", value: 2,
			after: "{\r\n  // c\r\n  \"a\": 1, // one\r\n  \"b\": {\r\n    \"c\": 2\r\n  }\r\n}\r\n",
		},
		{
			name:   "CRLF removal",
			before: "{\r\n  \"a\": 1,\r\n  \"b\": 2 // two\r\n}\r\n",
			path:   "b", value: nil,
			after: "{\r\n  \"a\": 1\r\n}\r\n",
		},
		{
			name:   "byte order mark kept",
			before: "\xef\xbb\xbf{\n  \"a\": 1\n}\n",
			path:   "a", value: 2,
			after: "\xef\xbb\xbf{\n  \"a\": 2\n}\n",
		},
		{
			name:   "empty file",
			before: "",
			path:   "compaction.enabled", value: false,
			after: "{\n  \"compaction\": {\n    \"enabled\": false\n  }\n}\n",
		},
		{
			name:   "missing file",
			before: "\x00",
			path:   "html", value: "<a>",
			after: "{\n  \"html\": \"<a>\"\n}\n",
		},
		{
			name:   "file of comments only",
			before: "// settings\n",
			path:   "a", value: 1,
			after: "// settings\n{\n  \"a\": 1\n}\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := setOnce(t, c.before, c.path, c.value); got != c.after {
				t.Errorf("Set(%q, %v) on\n%s\ngot\n%s\nwant\n%s", c.path, c.value, c.before, got, c.after)
			}
		})
	}
}

func TestSetRemoveMissingFileWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := mustLoad(t, dir, "")
	if err := s.Set(Global, "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
}

func TestSetLeavesUnparseableFileAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, FileName)
	const broken = "{\n  \"a\": 1,, // broken\n}\n"
	writeFile(t, file, broken)
	s, _ := Load(dir, "")
	if err := s.Set(Global, "b", 2); err == nil {
		t.Fatal("Set accepted an unparseable file")
	}
	if data, _ := os.ReadFile(file); string(data) != broken {
		t.Errorf("file changed to %q", data)
	}
}

// A settings file that is a symbolic link (into a dotfiles repository, say)
// is edited through the link: the target changes and the link stays.
func TestSetThroughLink(t *testing.T) {
	dots := t.TempDir()
	target := filepath.Join(dots, "settings.json")
	if err := os.WriteFile(target, []byte("{\n  // mine\n  \"steeringMode\": \"all\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agentDir := t.TempDir()
	link := filepath.Join(agentDir, FileName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	s, err := Load(agentDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Global, "steeringMode", "one-at-a-time"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced by a file: %v", err)
	}
	b, _ := os.ReadFile(target)
	if string(b) != "{\n  // mine\n  \"steeringMode\": \"one-at-a-time\"\n}\n" {
		t.Fatalf("target %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
