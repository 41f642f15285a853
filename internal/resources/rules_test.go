package resources

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ruleNames(rs Rules) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func TestLoadRulesPrecedence(t *testing.T) {
	agentDir, cwd := fixture(t)

	rs, diags := LoadRules(Options{AgentDir: agentDir, Cwd: cwd})
	if len(diags) != 0 || !reflect.DeepEqual(ruleNames(rs), []string{"no-any", "style"}) {
		t.Fatalf("untrusted: %v %v", ruleNames(rs), diags)
	}

	rs, diags = LoadRules(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	want := []string{"style", "no-any", "react", "db", "windsurfrules", "testing"}
	if !reflect.DeepEqual(ruleNames(rs), want) {
		t.Fatalf("trusted: %v, want %v", ruleNames(rs), want)
	}
	// The project's style shadows the user's and Cursor's.
	if len(diags) != 2 {
		t.Errorf("diags %v", diags)
	}
	style := rs.Find("style")
	if !style.AlwaysApply || style.Content != "Project style wins." || style.Source.Provider != ProviderPisces || style.Source.Level != ScopeProject {
		t.Errorf("style %+v", style)
	}
	react := rs.Find("react")
	if react.AlwaysApply || !reflect.DeepEqual(react.Globs, []string{"src/**/*.tsx", "src/**/*.jsx"}) || react.Source.ProviderName != "Cursor" {
		t.Errorf("react %+v", react)
	}
	if !rs.Find("db").AlwaysApply || !rs.Find("windsurfrules").AlwaysApply || !rs.Find("testing").AlwaysApply {
		t.Error("windsurf always_on, .windsurfrules and .clinerules should apply always")
	}
	if rs.Find("testing").Source.Provider != ProviderCline {
		t.Errorf("testing %+v", rs.Find("testing").Source)
	}

	rs, _ = LoadRules(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true, NoForeignRules: true})
	if !reflect.DeepEqual(ruleNames(rs), []string{"style", "no-any"}) {
		t.Errorf("no foreign: %v", ruleNames(rs))
	}
}

func TestClineRulesFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".clinerules": "Be brief.\n"})
	rs, _ := LoadRules(Options{Cwd: dir, Trusted: true})
	if len(rs) != 1 || rs[0].Name != "clinerules" || !rs[0].AlwaysApply || rs[0].Content != "Be brief." {
		t.Errorf("%+v", rs)
	}
	writeFiles(t, dir, map[string]string{".clinerules": "---\npaths:\n  - \"src/**\"\n---\nOnly src.\n"})
	rs, _ = LoadRules(Options{Cwd: dir, Trusted: true})
	if rs[0].AlwaysApply || !reflect.DeepEqual(rs[0].Globs, []string{"src/**"}) {
		t.Errorf("cline paths: %+v", rs[0])
	}
}

func TestParseRuleStream(t *testing.T) {
	r, problems := ParseRule("r", "/r.md", `---
description: d
condition: ["foo\\d+", "/BAR/i", "(?<!x)y", "*.rs"]
scope: "text, tool:edit(*.{ts,tsx}), bogus"
interruptMode: sometimes
---
Body`, ProviderPisces, ScopeUser)
	if !r.IsStream() {
		t.Fatal("not a stream rule")
	}
	if want := []string{`foo\d+`, "/BAR/i", ".*"}; !reflect.DeepEqual(r.Condition, want) {
		t.Errorf("condition %q, want %q", r.Condition, want)
	}
	if want := []string{"text", "tool:edit(*.{ts,tsx})", "tool:edit(*.rs)", "tool:write(*.rs)"}; !reflect.DeepEqual(r.Scope, want) {
		t.Errorf("scope %q, want %q", r.Scope, want)
	}
	if r.InterruptMode != "" {
		t.Errorf("interruptMode %q", r.InterruptMode)
	}
	joined := strings.Join(problems, "\n")
	for _, want := range []string{`condition "(?<!x)y"`, `unknown scope "bogus"`, `unknown interruptMode "sometimes"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q: %v", want, problems)
		}
	}
	if !r.conds[1].MatchString("a bar b") {
		t.Error("/BAR/i is case-insensitive")
	}

	// Older key names.
	for _, key := range []string{"ttsrTrigger", "ttsr_trigger"} {
		r, _ := ParseRule("r", "/r.md", "---\n"+key+": console\\.log\n---\nx", ProviderPisces, ScopeUser)
		if !reflect.DeepEqual(r.Condition, []string{`console\.log`}) {
			t.Errorf("%s: %q", key, r.Condition)
		}
	}
	// condition wins over the older names.
	r, _ = ParseRule("r", "/r.md", "---\ncondition: a\nttsrTrigger: b\n---\n", ProviderPisces, ScopeUser)
	if !reflect.DeepEqual(r.Condition, []string{"a"}) {
		t.Errorf("precedence %q", r.Condition)
	}
}

func TestRuleJSON(t *testing.T) {
	r, _ := ParseRule("no-any", "/a/no-any.md", "---\ndescription: d\ncondition: x\nscope: text\ninterruptMode: never\n---\nContent\n", ProviderPisces, ScopeUser)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"no-any","path":"/a/no-any.md","content":"Content","description":"d","condition":["x"],"scope":["text"],"interruptMode":"never",` +
		`"_source":{"provider":"pisces","providerName":"Pisces","path":"/a/no-any.md","level":"user"}}`
	if string(data) != want {
		t.Errorf("\n got %s\nwant %s", data, want)
	}
}

func TestRulesPromptText(t *testing.T) {
	agentDir, cwd := fixture(t)
	rs, _ := LoadRules(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	always := rs.AlwaysApplyText()
	for _, want := range []string{"## style\n\nProject style wins.\n", "## db\n\nUse migrations", "## windsurfrules\n\nPrefer small commits.", "## testing\n"} {
		if !strings.Contains(always, want) {
			t.Errorf("always text lacks %q:\n%s", want, always)
		}
	}
	if strings.Contains(always, "react") || strings.Contains(always, "no-any") {
		t.Errorf("always text has on-demand rules:\n%s", always)
	}
	listing := rs.PromptSection()
	wantLine := "- react: React conventions (files: src/**/*.tsx, src/**/*.jsx)\n  File: " + filepath.Join(cwd, ".cursor", "rules", "react.mdc")
	if !strings.Contains(listing, wantLine) {
		t.Errorf("listing lacks %q:\n%s", wantLine, listing)
	}
	if strings.Contains(listing, "no-any") || strings.Contains(listing, "- style") {
		t.Errorf("listing has stream or always rules:\n%s", listing)
	}
	if (Rules{}).AlwaysApplyText() != "" || (Rules{}).PromptSection() != "" {
		t.Error("empty rules give text")
	}
	if got := ruleNames(rs.ForPath("/p/src/ui/button.tsx")); !reflect.DeepEqual(got, []string{"react"}) {
		t.Errorf("ForPath %v", got)
	}
	if got := ruleNames(rs.Stream()); !reflect.DeepEqual(got, []string{"no-any"}) {
		t.Errorf("Stream %v", got)
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.ts", "a.ts", true},
		{"*.ts", "src/deep/a.ts", true},
		{"*.ts", "/abs/src/a.ts", true},
		{"*.ts", "a.tsx", false},
		{"*.{ts,tsx}", "src/a.tsx", true},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**/*.go", "/home/me/proj/src/x/a.go", true},
		{"src/*.go", "src/x/a.go", false},
		{"/etc/*.conf", "/etc/a.conf", true},
		{"/etc/*.conf", "/x/etc/a.conf", false},
		{"**", "any/thing", true},
		{"file?.md", "file1.md", true},
		{"[ab].md", "b.md", true},
		{"[!ab].md", "b.md", false},
		{"./src/*.c", "src/a.c", true},
		{"*.ts", `src\win\a.ts`, true},
		{"", "a", false},
	}
	for _, c := range cases {
		if got := MatchGlob(c.pattern, c.path); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
}
