package resources

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/fsx"
)

func TestLoadSkills(t *testing.T) {
	agentDir, cwd := fixture(t)
	ss, diags := LoadSkills(Options{AgentDir: agentDir, Cwd: cwd})
	if len(diags) != 0 || len(ss) != 1 || ss[0].Name != "pdf-tools" {
		t.Fatalf("untrusted: %+v %v", ss, diags)
	}
	ss, _ = LoadSkills(Options{AgentDir: agentDir, Cwd: cwd, Trusted: true})
	if len(ss) != 2 || ss[0].Name != "deploy" || ss[0].Scope != ScopeProject {
		t.Fatalf("trusted: %+v", ss)
	}
	if ss[0].Description != "Deploy the service to staging" {
		t.Errorf("folded description %q", ss[0].Description)
	}
	if ss[0].BaseDir != filepath.Join(cwd, ".pisces", "skills", "deploy") {
		t.Errorf("baseDir %q", ss[0].BaseDir)
	}
}

func TestSkillRules(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/no-desc/SKILL.md":        "---\nname: no-desc\n---\nbody",
		"skills/Bad_Name/SKILL.md":       "---\ndescription: d\n---\nbody",
		"skills/dirname/SKILL.md":        "---\ndescription: named after dir\ndisable-model-invocation: true\n---\nbody",
		"skills/dup/SKILL.md":            "---\nname: dirname\ndescription: dup\n---\n",
		"skills/.hidden/SKILL.md":        "---\ndescription: hidden\n---\n",
		"skills/group/a/SKILL.md":        "---\ndescription: nested a\n---\n",
		"skills/group/README.md":         "not a skill",
		"skills/toplevel-file.md":        "not a skill either",
		"skills/node_modules/x/SKILL.md": "---\ndescription: skipped\n---\n",
	})
	ss, diags := LoadSkills(Options{AgentDir: dir})
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"Bad_Name", "dirname", "a"}) {
		t.Errorf("names %v", names)
	}
	msgs := ""
	for _, d := range diags {
		msgs += d.String() + "\n"
	}
	for _, want := range []string{"no description", "should be lowercase", "shadowed"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, msgs)
		}
	}
	section := ss.PromptSection()
	if strings.Contains(section, "dirname") {
		t.Error("disable-model-invocation skill listed")
	}
	if !strings.Contains(section, "- a: nested a\n  File: "+filepath.Join(dir, "skills", "group", "a", "SKILL.md")) {
		t.Errorf("section:\n%s", section)
	}
	// Still a command.
	if _, ok := ss.Expand("/skill:dirname"); !ok {
		t.Error("disabled skill not expandable")
	}
	if (Skills{}).PromptSection() != "" {
		t.Error("empty section")
	}
}

func TestSkillExpand(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: PDFs\n---\n\n# PDF\n\nUse tools.\n\n",
	})
	ss, _ := LoadSkills(Options{AgentDir: dir})
	file := filepath.Join(dir, "skills", "pdf", "SKILL.md")
	base := filepath.Join(dir, "skills", "pdf")
	block := `<skill name="pdf" location="` + file + `">` + "\nReferences are relative to " + base + ".\n\n# PDF\n\nUse tools.\n</skill>"

	got, ok := ss.Expand("/skill:pdf  summarise report.pdf ")
	if !ok || got != block+"\n\nsummarise report.pdf" {
		t.Errorf("with args:\n%q\nwant\n%q", got, block+"\n\nsummarise report.pdf")
	}
	got, ok = ss.Expand("/skill:pdf")
	if !ok || got != block {
		t.Errorf("no args: %q", got)
	}
	if got, ok := ss.Expand("/skill:nope x"); ok || got != "/skill:nope x" {
		t.Errorf("unknown: %q", got)
	}
	if got, ok := ss.Expand("/pdf"); ok || got != "/pdf" {
		t.Errorf("not a skill command: %q", got)
	}

	// The body is read again at expansion time; if the file is gone, the
	// body from load time is used.
	if err := os.WriteFile(file, []byte("---\ndescription: x\n---\nNew body"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := ss.Expand("/skill:pdf"); !strings.Contains(got, "\n\nNew body\n</skill>") {
		t.Errorf("edited: %q", got)
	}
	os.Remove(file)
	if got, _ := ss.Expand("/skill:pdf"); !strings.Contains(got, "\n\n# PDF\n\nUse tools.\n</skill>") {
		t.Errorf("removed: %q", got)
	}
}

// Without a home directory a ~/ path is a diagnostic, not a path under the
// working directory.
func TestHomePathWithoutHome(t *testing.T) {
	cwd := t.TempDir()
	writeFiles(t, cwd, map[string]string{"~/skills/planted/SKILL.md": "---\nname: planted\ndescription: x\n---\nbody\n"})
	defer fsx.OverrideAccountHome(func() (string, error) { return "", errors.New("unknown user") })()
	t.Setenv("HOME", "")
	set := Load(Options{Cwd: cwd, SkillPaths: []string{"~/skills"}, PromptPaths: []string{"~/skills"}, RulePaths: []string{"~/skills"}})
	if set.Skills.Find("planted") != nil {
		t.Error("skill loaded from <cwd>/~")
	}
	if len(set.Diagnostics) != 3 {
		t.Fatalf("diagnostics %v", set.Diagnostics)
	}
	for _, d := range set.Diagnostics {
		if d.Path != "~/skills" || !strings.Contains(d.Message, "cannot find your home directory") {
			t.Errorf("diagnostic %v", d)
		}
	}
}
