package resources

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fixture(t *testing.T) (agentDir, cwd string) {
	t.Helper()
	agentDir, err := filepath.Abs("testdata/agent")
	if err != nil {
		t.Fatal(err)
	}
	cwd, err = filepath.Abs("testdata/project")
	if err != nil {
		t.Fatal(err)
	}
	return agentDir, cwd
}

func TestParseArgs(t *testing.T) {
	cases := map[string][]string{
		``:                          nil,
		`a b  c`:                    {"a", "b", "c"},
		`"a b" c`:                   {"a b", "c"},
		`'x y' "z"`:                 {"x y", "z"},
		`pre"mid dle"post`:          {"premid dlepost"},
		`"" a`:                      {"a"},
		"tab\tsep\nline":            {"tab", "sep", "line"},
		`"it's" fine`:               {"it's", "fine"},
		`unclosed "quote runs on`:   {"unclosed", "quote runs on"},
		`   leading and trailing  `: {"leading", "and", "trailing"},
	}
	for in, want := range cases {
		if got := ParseArgs(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSubstituteArgs(t *testing.T) {
	args := []string{"one", "two words", "three"}
	cases := map[string]string{
		"$1 and $2":             "one and two words",
		"$3$1":                  "threeone",
		"$4 missing":            " missing",
		"$10":                   "",
		"all: $@":               "all: one two words three",
		"all: $ARGUMENTS.":      "all: one two words three.",
		"from 2: ${@:2}":        "from 2: two words three",
		"slice: ${@:1:2}":       "slice: one two words",
		"past end: ${@:9}|":     "past end: |",
		"price $ 5, $x, $":      "price $ 5, $x, $",
		"bad ${@:x} ${@:1":      "bad ${@:x} ${@:1",
		"no placeholders":       "no placeholders",
		"$0 is not an argument": " is not an argument",
	}
	for in, want := range cases {
		if got := SubstituteArgs(in, args); got != want {
			t.Errorf("SubstituteArgs(%q) = %q, want %q", in, got, want)
		}
	}
	// Text from arguments is not substituted again.
	if got := SubstituteArgs("$1 $2", []string{"$2", "x"}); got != "$2 x" {
		t.Errorf("re-substituted: %q", got)
	}
}

func TestLoadTemplates(t *testing.T) {
	agentDir, cwd := fixture(t)

	// Untrusted: only the agent dir.
	ts, diags := LoadTemplates(Options{AgentDir: agentDir, Cwd: cwd})
	if len(diags) != 0 {
		t.Errorf("diags: %v", diags)
	}
	if names := templateNames(ts); !reflect.DeepEqual(names, []string{"explain", "review"}) {
		t.Fatalf("names = %v", names)
	}
	review := ts.Find("review")
	if review.Description != "Review the staged changes" || review.ArgumentHint != "[focus]" || review.Scope != ScopeUser {
		t.Errorf("review = %+v", review)
	}
	if review.Path != filepath.Join(agentDir, "prompts", "review.md") {
		t.Errorf("path = %q", review.Path)
	}
	explain := ts.Find("explain")
	if want := "Explain the following code in plain words, step by step, so..."; explain.Description != want {
		t.Errorf("description from first line = %q, want %q", explain.Description, want)
	}

	// Trusted: the project's review wins over the user's.
	ts, diags = LoadTemplates(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	if names := templateNames(ts); !reflect.DeepEqual(names, []string{"review", "explain"}) {
		t.Fatalf("names = %v", names)
	}
	if ts.Find("review").Scope != ScopeProject || ts.Find("review").Description != "Project review" {
		t.Errorf("review = %+v", ts.Find("review"))
	}
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "shadowed") {
		t.Errorf("diags = %v", diags)
	}
}

func templateNames(ts Templates) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestTemplateExpand(t *testing.T) {
	agentDir, cwd := fixture(t)
	ts, _ := LoadTemplates(Options{AgentDir: agentDir, Cwd: cwd})
	got, ok := ts.Expand(`/review "error handling" extra`)
	want := "Review the staged changes. Focus on error handling.\nEverything: error handling extra\n"
	if !ok || got != want {
		t.Errorf("Expand = %q, %v; want %q", got, ok, want)
	}
	got, ok = ts.Expand("/explain")
	if !ok || !strings.HasSuffix(got, "newcomer understands it: \n") {
		t.Errorf("no args: %q %v", got, ok)
	}
	for _, text := range []string{"/unknown x", "review x", " /review", "/", "hello"} {
		if got, ok := ts.Expand(text); ok || got != text {
			t.Errorf("Expand(%q) = %q, %v; want unchanged", text, got, ok)
		}
	}
}

func TestExplicitPaths(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"extra/one.md":               "One $1",
		"single.md":                  "---\ndescription: single\n---\nSingle",
		"skills/s1/SKILL.md":         "---\ndescription: S1\n---\nbody",
		"nested/group/s2/SKILL.md":   "---\nname: s2\ndescription: S2\n---\nbody",
		"nested/group/s2/x/SKILL.md": "---\ndescription: inner, ignored\n---\n",
		"rules/r.mdc":                "---\nalwaysApply: true\n---\nR",
	})
	opts := Options{
		Cwd:         dir,
		PromptPaths: []string{"extra", filepath.Join(dir, "single.md"), "missing.md"},
		SkillPaths:  []string{"skills", "nested"},
		RulePaths:   []string{"rules"},
	}
	s := Load(opts)
	if names := templateNames(s.Templates); !reflect.DeepEqual(names, []string{"one", "single"}) {
		t.Errorf("templates %v", names)
	}
	if s.Templates[0].Scope != ScopeTemporary {
		t.Errorf("scope %q", s.Templates[0].Scope)
	}
	if len(s.Skills) != 2 || s.Skills[0].Name != "s1" || s.Skills[1].Name != "s2" {
		t.Errorf("skills %+v", s.Skills)
	}
	if len(s.Rules) != 1 || !s.Rules[0].AlwaysApply || s.Rules[0].Source.Level != ScopeTemporary {
		t.Errorf("rules %+v", s.Rules)
	}
	if len(s.Diagnostics) != 1 || !strings.Contains(s.Diagnostics[0].Message, "not found") {
		t.Errorf("diags %v", s.Diagnostics)
	}
	cmds := s.Commands()
	if cmds[0].Location != "path" || cmds[0].SourceInfo.Scope != ScopeTemporary {
		t.Errorf("cmd %+v", cmds[0])
	}
}

func TestCommandsJSON(t *testing.T) {
	agentDir, cwd := fixture(t)
	s := Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	cmds := s.Commands()
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name+"/"+c.Source+"/"+c.Location)
	}
	want := []string{"review/prompt/project", "explain/prompt/user", "skill:deploy/skill/project", "skill:pdf-tools/skill/user"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("commands %v, want %v", names, want)
	}
	data, err := json.Marshal(cmds[3])
	if err != nil {
		t.Fatal(err)
	}
	skillDir := filepath.Join(agentDir, "skills", "pdf-tools")
	wantJSON := `{"name":"skill:pdf-tools","description":"Extract text and tables from PDF files","source":"skill",` +
		`"sourceInfo":{"path":"` + filepath.Join(skillDir, "SKILL.md") + `","source":"local","scope":"user","origin":"top-level","baseDir":"` + skillDir + `"},` +
		`"location":"user","path":"` + filepath.Join(skillDir, "SKILL.md") + `"}`
	if string(data) != wantJSON {
		t.Errorf("json\n got %s\nwant %s", data, wantJSON)
	}
	data, _ = json.Marshal(cmds[0])
	if strings.Contains(string(data), "baseDir") || !strings.Contains(string(data), `"scope":"project"`) {
		t.Errorf("template json %s", data)
	}
	// An extension command built by the helper; no description.
	ext := NewCommandInfo("gate", "", SourceExtension, "/x/gate.py", ScopeTemporary, "")
	data, _ = json.Marshal(ext)
	if string(data) != `{"name":"gate","source":"extension","sourceInfo":{"path":"/x/gate.py","source":"local","scope":"temporary","origin":"top-level"},"location":"path","path":"/x/gate.py"}` {
		t.Errorf("ext json %s", data)
	}
	// Never nil, so it marshals as [].
	if data, _ := json.Marshal((*Set)(nil).Commands()); string(data) != "[]" {
		t.Errorf("empty commands %s", data)
	}
}

func TestSetExpandOrder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"prompts/hello.md":      "Hello $1",
		"skills/hello/SKILL.md": "---\ndescription: greet\n---\nSkill body",
	})
	s := Load(Options{AgentDir: dir})
	if got, ok := s.Expand("/hello world"); !ok || got != "Hello world" {
		t.Errorf("template: %q %v", got, ok)
	}
	got, ok := s.Expand("/skill:hello world")
	if !ok || !strings.HasPrefix(got, `<skill name="hello"`) || !strings.HasSuffix(got, "</skill>\n\nworld") {
		t.Errorf("skill: %q %v", got, ok)
	}
	if got, ok := s.Expand("plain"); ok || got != "plain" {
		t.Errorf("plain: %q %v", got, ok)
	}
}

// --no-skills and --no-prompt-templates leave out the discovered skills and
// templates (agent dir and project) but keep the explicit paths.
func TestNoDiscovery(t *testing.T) {
	agentDir, cwd := fixture(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"extra/one.md":       "One $1",
		"skills/s1/SKILL.md": "---\ndescription: S1\n---\nbody",
	})
	all := Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	if len(all.Templates) == 0 || len(all.Skills) == 0 {
		t.Fatalf("fixture has no discovered resources: %+v", all)
	}
	opts := Options{AgentDir: agentDir, Cwd: cwd, Trusted: true,
		PromptPaths: []string{filepath.Join(dir, "extra")}, SkillPaths: []string{filepath.Join(dir, "skills")},
		NoSkillDiscovery: true, NoPromptDiscovery: true}
	s := Load(opts)
	if names := templateNames(s.Templates); !reflect.DeepEqual(names, []string{"one"}) {
		t.Errorf("templates %v", names)
	}
	if len(s.Skills) != 1 || s.Skills[0].Name != "s1" || s.Skills[0].Scope != ScopeTemporary {
		t.Errorf("skills %+v", s.Skills)
	}
	// Each switch is independent.
	opts.NoPromptDiscovery = false
	s = Load(opts)
	if len(s.Templates) != len(all.Templates)+1 || len(s.Skills) != 1 {
		t.Errorf("only skills off: %d templates, %d skills", len(s.Templates), len(s.Skills))
	}
}
