package task

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBundledAgents(t *testing.T) {
	agents := BundledAgents()
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
		if a.Source != SourceBundled || a.Description == "" || len(a.Prompt) < 200 {
			t.Errorf("%s: %+v", a.Name, a)
		}
	}
	if strings.Join(names, ",") != "explore,plan,reviewer,task" {
		t.Errorf("names: %v", names)
	}
	explore, _ := findAgent(agents, "explore")
	for _, tool := range explore.Tools {
		if tool == "bash" || tool == "edit" || tool == "write" {
			t.Errorf("explore is not read-only: %v", explore.Tools)
		}
	}
	if task, _ := findAgent(agents, "task"); task.Tools != nil {
		t.Errorf("task agent tools: %v", task.Tools)
	}
	var tnames []string
	for _, p := range BundledPromptTemplates() {
		tnames = append(tnames, p.Name)
		if p.Description == "" || !strings.Contains(p.Content, "$@") || strings.HasPrefix(p.Content, "---") {
			t.Errorf("%+v", p)
		}
	}
	if strings.Join(tnames, ",") != "architect-plan,implement-with-critic,implement" {
		t.Errorf("templates: %v", tnames)
	}
}

func TestParseAgent(t *testing.T) {
	def, err := ParseAgent([]byte("---\nname: scout\ndescription: \"Finds: things\"\ntools: [read, 'grep', find]\nmodel: anthropic/claude-haiku\n---\n\nYou scout.\n"), "file")
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "scout" || def.Description != "Finds: things" || strings.Join(def.Tools, ",") != "read,grep,find" || def.Model != "anthropic/claude-haiku" || def.Prompt != "You scout." {
		t.Errorf("%+v", def)
	}
	def, err = ParseAgent([]byte("---\r\ndescription: multi\r\n  line\r\ntools:\r\n  - read\r\n  - bash\r\n---\r\nBody"), "fallback")
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "fallback" || def.Description != "multi line" || strings.Join(def.Tools, ",") != "read,bash" || def.Prompt != "Body" {
		t.Errorf("%+v", def)
	}
	def, _ = ParseAgent([]byte("---\ntools: read, ls\n---\n"), "x")
	if strings.Join(def.Tools, ",") != "read,ls" {
		t.Errorf("%v", def.Tools)
	}
	def, _ = ParseAgent([]byte("just a prompt"), "plain")
	if def.Name != "plain" || def.Prompt != "just a prompt" || def.Tools != nil {
		t.Errorf("%+v", def)
	}
	for _, bad := range []string{"---\nname: x\n", "---\nnot a pair\n---\n", "---\nname: two words\n---\n"} {
		if _, err := ParseAgent([]byte(bad), "x"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestDiscoverAgentsPrecedence(t *testing.T) {
	agentDir, cwd := t.TempDir(), t.TempDir()
	write(t, filepath.Join(agentDir, "agents", "explore.md"), "---\nname: explore\ndescription: user explore\n---\nUser.")
	write(t, filepath.Join(agentDir, "agents", "mine.md"), "---\ndescription: mine\ntools: read\n---\nMine.")
	write(t, filepath.Join(agentDir, "agents", "broken.md"), "---\nno\n---\n")
	write(t, filepath.Join(agentDir, "agents", "notes.txt"), "ignored")
	write(t, filepath.Join(cwd, ".pisces", "agents", "mine.md"), "---\ndescription: project mine\n---\nProject.")
	agents, errs := DiscoverAgents(agentDir, cwd)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken.md") {
		t.Errorf("errs: %v", errs)
	}
	byName := map[string]AgentDef{}
	var names []string
	for _, a := range agents {
		byName[a.Name] = a
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "explore,mine,plan,reviewer,task" {
		t.Errorf("names: %v", names)
	}
	if a := byName["explore"]; a.Source != SourceUser || a.Description != "user explore" {
		t.Errorf("explore: %+v", a)
	}
	if a := byName["mine"]; a.Source != SourceProject || a.Description != "project mine" || a.Path != filepath.Join(cwd, ".pisces", "agents", "mine.md") {
		t.Errorf("mine: %+v", a)
	}
	// The tool's description lists them, and the tool finds project agents
	// in a trusted project only.
	trusted := false
	tool := New(Options{ArtifactsDir: t.TempDir(), AgentDir: agentDir, Settings: DefaultSettings(),
		Project: func() (string, bool) { return cwd, trusted }})
	if d := tool.Description(); !strings.Contains(d, "- mine: mine\n") || !strings.Contains(d, "- reviewer: ") {
		t.Errorf("untrusted description:\n%s", d)
	}
	trusted = true
	if d := tool.Description(); !strings.Contains(d, "- mine: project mine") || !strings.Contains(d, "- reviewer: ") {
		t.Errorf("trusted description:\n%s", d)
	}
	// Without Project, Cwd is untrusted.
	tool = New(Options{ArtifactsDir: t.TempDir(), AgentDir: agentDir, Cwd: cwd, Settings: DefaultSettings()})
	if d := tool.Description(); strings.Contains(d, "project mine") {
		t.Errorf("Cwd only:\n%s", d)
	}
}
