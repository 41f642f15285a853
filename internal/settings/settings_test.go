package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// setup writes the given global and project file contents ("" = no file)
// and returns the agent dir and cwd.
func setup(t *testing.T, global, project string) (agentDir, cwd string) {
	t.Helper()
	root := t.TempDir()
	agentDir = filepath.Join(root, "agent")
	cwd = filepath.Join(root, "proj")
	for _, d := range []string{agentDir, filepath.Join(cwd, ProjectDirName)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if global != "" {
		writeFile(t, filepath.Join(agentDir, FileName), global)
	}
	if project != "" {
		writeFile(t, filepath.Join(cwd, ProjectDirName, FileName), project)
	}
	return agentDir, cwd
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, agentDir, cwd string) *Settings {
	t.Helper()
	s, err := Load(agentDir, cwd)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, "", "")
	s := mustLoad(t, agentDir, cwd)
	checks := []struct {
		name      string
		got, want any
	}{
		{"DefaultProvider", s.DefaultProvider(), ""},
		{"DefaultModel", s.DefaultModel(), ""},
		{"DefaultThinkingLevel", s.DefaultThinkingLevel(), "medium"},
		{"SteeringMode", s.SteeringMode(), "one-at-a-time"},
		{"FollowUpMode", s.FollowUpMode(), "one-at-a-time"},
		{"InterruptMode", s.InterruptMode(), "immediate"},
		{"CompactionEnabled", s.CompactionEnabled(), true},
		{"ReserveTokens", s.ReserveTokens(), 16384},
		{"KeepRecentTokens", s.KeepRecentTokens(), 20000},
		{"BranchSummaryReserveTokens", s.BranchSummaryReserveTokens(), 16384},
		{"RetryEnabled", s.RetryEnabled(), true},
		{"RetryMaxRetries", s.RetryMaxRetries(), 3},
		{"RetryBaseDelayMs", s.RetryBaseDelayMs(), 2000},
		{"RetryMaxDelayMs", s.RetryMaxDelayMs(), 60000},
		{"ShellPath", s.ShellPath(), ""},
		{"ShellCommandPrefix", s.ShellCommandPrefix(), ""},
		{"EnabledModels", s.EnabledModels(), []string(nil)},
		{"DefaultTools", s.DefaultTools(), []string(nil)},
		{"Extensions", s.Extensions(), []string(nil)},
		{"SessionDir", s.SessionDir(), ""},
		{"Raw", s.Raw(), map[string]any{}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if _, ok := s.Get("compaction.enabled"); ok {
		t.Error("Get of an unset key reported ok")
	}
}

func TestNoDirectories(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, "", "")
	if s.DefaultThinkingLevel() != "medium" {
		t.Fatal("defaults missing")
	}
	if err := s.Set(Global, "a", 1); err == nil {
		t.Fatal("Set without an agent dir succeeded")
	}
}

func TestAccessorsReadValues(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{
		"defaultProvider": "anthropic",
		"defaultModel": "claude-x",
		"defaultThinkingLevel": "high",
		"steeringMode": "all",
		"followUpMode": "all",
		"interruptMode": "wait",
		"compaction": {"enabled": false, "reserveTokens": 1000, "keepRecentTokens": 2000},
		"branchSummary": {"reserveTokens": 3000},
		"retry": {"enabled": false, "maxRetries": 7, "baseDelayMs": 10, "maxDelayMs": 500},
		"shellPath": "/bin/zsh",
		"shellCommandPrefix": "set -e",
		"enabledModels": ["a/*", "b"],
		"defaultTools": ["read", "bash"],
		"extensions": ["./ext.ts"],
		"sessionDir": "/tmp/sessions"
	}`, "")
	s := mustLoad(t, agentDir, cwd)
	checks := []struct {
		name      string
		got, want any
	}{
		{"DefaultProvider", s.DefaultProvider(), "anthropic"},
		{"DefaultModel", s.DefaultModel(), "claude-x"},
		{"DefaultThinkingLevel", s.DefaultThinkingLevel(), "high"},
		{"SteeringMode", s.SteeringMode(), "all"},
		{"FollowUpMode", s.FollowUpMode(), "all"},
		{"InterruptMode", s.InterruptMode(), "wait"},
		{"CompactionEnabled", s.CompactionEnabled(), false},
		{"ReserveTokens", s.ReserveTokens(), 1000},
		{"KeepRecentTokens", s.KeepRecentTokens(), 2000},
		{"BranchSummaryReserveTokens", s.BranchSummaryReserveTokens(), 3000},
		{"RetryEnabled", s.RetryEnabled(), false},
		{"RetryMaxRetries", s.RetryMaxRetries(), 7},
		{"RetryBaseDelayMs", s.RetryBaseDelayMs(), 10},
		{"RetryMaxDelayMs", s.RetryMaxDelayMs(), 500},
		{"ShellPath", s.ShellPath(), "/bin/zsh"},
		{"ShellCommandPrefix", s.ShellCommandPrefix(), "set -e"},
		{"EnabledModels", s.EnabledModels(), []string{"a/*", "b"}},
		{"DefaultTools", s.DefaultTools(), []string{"read", "bash"}},
		{"Extensions", s.Extensions(), []string{"./ext.ts"}},
		{"SessionDir", s.SessionDir(), "/tmp/sessions"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestInvalidValuesFallBackToDefaults(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{"steeringMode": "bogus", "interruptMode": 3,
		"compaction": {"reserveTokens": "many", "keepRecentTokens": 1.5}, "retry": true}`, "")
	s := mustLoad(t, agentDir, cwd)
	if s.SteeringMode() != "one-at-a-time" || s.InterruptMode() != "immediate" {
		t.Errorf("modes = %q %q", s.SteeringMode(), s.InterruptMode())
	}
	if s.ReserveTokens() != 16384 || s.KeepRecentTokens() != 20000 || s.RetryMaxRetries() != 3 {
		t.Errorf("numbers = %d %d %d", s.ReserveTokens(), s.KeepRecentTokens(), s.RetryMaxRetries())
	}
}

func TestRetryMaxDelayProviderKey(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{"retry": {"maxDelayMs": 500, "provider": {"maxRetryDelayMs": 9000}}}`, "")
	if got := mustLoad(t, agentDir, cwd).RetryMaxDelayMs(); got != 9000 {
		t.Errorf("RetryMaxDelayMs = %d, want 9000 (retry.provider.maxRetryDelayMs wins)", got)
	}
	agentDir, cwd = setup(t, `{"retry": {"provider": {"maxRetryDelayMs": 7000}}}`, "")
	if got := mustLoad(t, agentDir, cwd).RetryMaxDelayMs(); got != 7000 {
		t.Errorf("RetryMaxDelayMs = %d, want 7000", got)
	}
}

func TestMergeProjectOverGlobal(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t,
		`{"defaultModel": "g", "defaultProvider": "gp",
		  "compaction": {"enabled": false, "reserveTokens": 1},
		  "enabledModels": ["a", "b", "c"],
		  "images": {"autoResize": true}}`,
		`{"defaultModel": "p",
		  "compaction": {"reserveTokens": 2, "keepRecentTokens": 3},
		  "enabledModels": ["z"],
		  "images": 5}`)
	s := mustLoad(t, agentDir, cwd)
	want := map[string]any{
		"defaultModel":    "p",
		"defaultProvider": "gp",
		"compaction": map[string]any{
			"enabled":          false,
			"reserveTokens":    json.Number("2"),
			"keepRecentTokens": json.Number("3"),
		},
		"enabledModels": []any{"z"},
		"images":        json.Number("5"),
	}
	if got := s.Raw(); !reflect.DeepEqual(got, want) {
		t.Errorf("Raw =\n%#v\nwant\n%#v", got, want)
	}
	if s.CompactionEnabled() || s.ReserveTokens() != 2 || s.KeepRecentTokens() != 3 {
		t.Error("typed accessors disagree with the merge")
	}
}

func TestRawIsACopy(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{"compaction": {"enabled": false}, "enabledModels": ["a"]}`, "")
	s := mustLoad(t, agentDir, cwd)
	raw := s.Raw()
	raw["compaction"].(map[string]any)["enabled"] = true
	raw["enabledModels"].([]any)[0] = "x"
	v, _ := s.Get("enabledModels")
	v.([]any)[0] = "y"
	if s.CompactionEnabled() || s.EnabledModels()[0] != "a" {
		t.Error("mutating a returned value changed the settings")
	}
}

func TestDottedKeys(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t,
		`{"task.budget.maxCostUsd": 5, "task": {"budget": {"maxTurns": 10}, "name": "g"},
		  "modelThinkingLevels": {"openai/gpt-4.1": "high"}}`,
		`{"task.budget.maxTurns": 20, "compaction.enabled": false}`)
	s := mustLoad(t, agentDir, cwd)
	want := map[string]any{
		"task": map[string]any{
			"budget": map[string]any{"maxCostUsd": json.Number("5"), "maxTurns": json.Number("20")},
			"name":   "g",
		},
		"compaction":          map[string]any{"enabled": false},
		"modelThinkingLevels": map[string]any{"openai/gpt-4.1": "high"},
	}
	if got := s.Raw(); !reflect.DeepEqual(got, want) {
		t.Errorf("Raw =\n%#v\nwant\n%#v", got, want)
	}
	if v, ok := s.Get("task.budget.maxCostUsd"); !ok || v != json.Number("5") {
		t.Errorf("Get = %v, %v", v, ok)
	}
	if s.CompactionEnabled() {
		t.Error("compaction.enabled as a dotted key was ignored")
	}
	if s.Int("task.budget.maxTurns", 0) != 20 {
		t.Error("Int of a dotted path")
	}
}

func TestCommentsAndTrailingCommas(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, "\ufeff"+`// global settings
{
	/* the model */ "defaultModel": "m", // trailing comment
	"url": "http://example.com/*not a comment*/", // slashes in strings stay
	"quote": "a \"// b\" c",
	"enabledModels": [
		"a",
		"b", /* block
		spanning lines */
	],
	"retry": {"maxRetries": 4,},
}
`, "")
	s := mustLoad(t, agentDir, cwd)
	want := map[string]any{
		"defaultModel":  "m",
		"url":           "http://example.com/*not a comment*/",
		"quote":         `a "// b" c`,
		"enabledModels": []any{"a", "b"},
		"retry":         map[string]any{"maxRetries": json.Number("4")},
	}
	if got := s.Raw(); !reflect.DeepEqual(got, want) {
		t.Errorf("Raw =\n%#v\nwant\n%#v", got, want)
	}
}

func TestEmptyFileIsEmptySettings(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, "  \n// nothing here\n", "")
	if got := mustLoad(t, agentDir, cwd).Raw(); len(got) != 0 {
		t.Errorf("Raw = %v", got)
	}
}

func TestMalformedFileNamesFileAndPosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		line, col     int
		msg           string
	}{
		{"bad value", "{\n  \"a\": 1,\n  \"b\": xyz\n}", 3, 8, "expected a value (a string in double quotes, a number, {, [, true, false or null), found 'x'"},
		{"missing comma", "{\n  // c\n  \"a\": 1\n  \"b\": 2\n}", 4, 3, `expected ',' or '}' after a value, found '"' (a missing comma?)`},
		{"unterminated", "{\n  \"a\": [1, 2", 2, 13, "the text ends too early"},
		{"unterminated comment", "{\n  /* oops\n}", 2, 3, "unterminated"},
		{"not an object", "\n  [1, 2]", 2, 3, "JSON object"},
		{"trailing garbage", "{\"a\": 1}\n x", 2, 2, "after the settings object"},
		{"columns count characters", "{\"ä\": 1 x}", 1, 9, "found 'x' (a missing comma?)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			agentDir, cwd := setup(t, `{"defaultModel": "g"}`, c.content)
			s, err := Load(agentDir, cwd)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FileError", err)
			}
			path := filepath.Join(cwd, ProjectDirName, FileName)
			if fe.Path != path || fe.Line != c.line || fe.Column != c.col {
				t.Errorf("got %s:%d:%d, want %s:%d:%d", fe.Path, fe.Line, fe.Column, path, c.line, c.col)
			}
			if want := fmt.Sprintf("%s: line %d, column %d: ", path, c.line, c.col); !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message %q lacks %q or %q", err, want, c.msg)
			}
			// The rest still loads; the broken file is not reset by Set.
			if s == nil || s.DefaultModel() != "g" {
				t.Fatal("global settings were not kept")
			}
			if err := s.Set(Project, "x", 1); err == nil {
				t.Error("Set over a malformed file succeeded")
			}
			b, _ := os.ReadFile(path)
			if string(b) != c.content {
				t.Error("malformed file was changed")
			}
		})
	}
}

func TestSetWritesAtomicallyAndKeepsOtherKeys(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{
		// comment (kept on write)
		"defaultModel": "m",
		"compaction": {"reserveTokens": 1},
		"task.budget.maxTurns": 3,
		"html": "<a&b>",
	}`, `{"defaultModel": "p"}`)
	path := filepath.Join(agentDir, FileName)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, agentDir, cwd)

	if err := s.Set(Global, "compaction.enabled", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Global, "enabledModels", []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Global, "retry.maxRetries", 9); err != nil {
		t.Fatal(err)
	}

	// The merged view is updated; the project still wins on defaultModel.
	if s.CompactionEnabled() || s.RetryMaxRetries() != 9 || s.DefaultModel() != "p" ||
		!reflect.DeepEqual(s.EnabledModels(), []string{"x", "y"}) {
		t.Errorf("merged view not updated: %v", s.Raw())
	}

	// The file holds the old keys plus the new ones, its comment kept.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := parseObject(data)
	if err != nil {
		t.Fatalf("written file does not parse: %v\n%s", err, data)
	}
	got := expandDotted(obj)
	n := func(s string) json.Number { return json.Number(s) }
	want := map[string]any{
		"defaultModel":  "m",
		"compaction":    map[string]any{"reserveTokens": n("1"), "enabled": false},
		"task":          map[string]any{"budget": map[string]any{"maxTurns": n("3")}},
		"html":          "<a&b>",
		"enabledModels": []any{"x", "y"},
		"retry":         map[string]any{"maxRetries": n("9")},
	}
	if !strings.Contains(string(data), "// comment (kept on write)") || !strings.Contains(string(data), `"task.budget.maxTurns": 3`) {
		t.Errorf("comment or dotted key lost:\n%s", data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("file =\n%s\nwant %#v", data, want)
	}
	if strings.Contains(string(data), `\u003c`) {
		t.Error("HTML characters were escaped")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", fi.Mode().Perm())
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(agentDir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("agent dir holds %v, want only %s", names, FileName)
	}
	// A fresh load sees the same thing.
	if s2 := mustLoad(t, agentDir, cwd); !reflect.DeepEqual(s2.Raw(), s.Raw()) {
		t.Errorf("reload =\n%v\nwant\n%v", s2.Raw(), s.Raw())
	}
}

func TestSetCreatesProjectFileAndRemoves(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	agentDir, cwd := filepath.Join(root, "agent"), filepath.Join(root, "proj")
	s := mustLoad(t, agentDir, cwd)
	if err := s.Set(Project, "defaultThinkingLevel", "low"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Project, "shellPath", "/bin/sh"); err != nil {
		t.Fatal(err)
	}
	if s.DefaultThinkingLevel() != "low" {
		t.Error("merged view not updated")
	}
	if err := s.Set(Project, "shellPath", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(Project, "not.there", nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cwd, ProjectDirName, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "{\n  \"defaultThinkingLevel\": \"low\"\n}\n" {
		t.Errorf("file = %q", data)
	}
	if _, err := os.Stat(filepath.Join(agentDir, FileName)); err == nil {
		t.Error("global file was written")
	}
	if err := s.Set(Project, "a..b", 1); err == nil {
		t.Error("Set accepted an empty path segment")
	}
	if err := s.Set(Project, "f", func() {}); err == nil {
		t.Error("Set accepted a value JSON cannot encode")
	}
}

func TestSetKeepsKeysWrittenByOthers(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, `{"a": 1}`, "")
	s := mustLoad(t, agentDir, cwd)
	writeFile(t, filepath.Join(agentDir, FileName), `{"a": 1, "b": 2}`)
	if err := s.Set(Global, "c", 3); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := s.Get(k); !ok {
			t.Errorf("key %q missing after Set", k)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	agentDir, cwd := setup(t, "", "")
	s := mustLoad(t, agentDir, cwd)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + string(rune('a'+i))
			if err := s.Set(Global, "group."+key, i); err != nil {
				t.Error(err)
			}
			_ = s.Raw()
			_ = s.ReserveTokens()
			_, _ = s.Get("group")
		}()
	}
	wg.Wait()
	g, _ := s.Get("group")
	if len(g.(map[string]any)) != 8 {
		t.Errorf("group = %v, want 8 keys", g)
	}
	if s2 := mustLoad(t, agentDir, cwd); !reflect.DeepEqual(s2.Raw(), s.Raw()) {
		t.Error("file and memory disagree after concurrent writes")
	}
}
