// Package resources loads the file-based resources that customise the agent
// without running code: prompt templates, skills and rules (including the
// rules that watch the model's stream, "TTSR"), and decides project trust.
//
// Everything here is a pure building block: it reads files and returns
// values; it emits no events and touches no session. The core wires it:
//
//   - Load (or LoadTemplates / LoadSkills / LoadRules) with Options.Trusted
//     set from a TrustDecider's decision for the directory;
//   - Set.Expand on prompt text (skill, then template, as pi does);
//   - Set.Commands for get_commands / reload_resources;
//   - Skills.PromptSection, Rules.AlwaysApplyText and Rules.PromptSection for
//     the system prompt;
//   - a Matcher per session, fed with stream deltas, for rules with a
//     condition; its InjectedState is persisted as a custom entry.
package resources

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pisces-agent/pisces/internal/fsx"
)

// ProjectDirName is the project-local configuration directory.
const ProjectDirName = ".pisces"

// PiProjectDirName is pi's project directory. Pisces reads nothing from
// it; what it holds is a reason to ask for trust (HasProjectResources).
const PiProjectDirName = ".pi"

// Scope says where a resource comes from, as pi 1.5's sourceInfo.scope.
type Scope string

const (
	ScopeUser      Scope = "user"      // the agent dir
	ScopeProject   Scope = "project"   // the project (<cwd>/.pisces/, other tools' files)
	ScopeTemporary Scope = "temporary" // a path given for this run (flags, settings)
)

// Location is the pre-0.62 get_commands "location" for a scope.
func (s Scope) Location() string {
	switch s {
	case ScopeUser:
		return "user"
	case ScopeProject:
		return "project"
	}
	return "path"
}

// Options say where to look.
type Options struct {
	AgentDir string // global resources: always loaded
	Cwd      string // the project directory

	// Trusted allows project-local resources (<cwd>/.pisces/… and other
	// tools' rule files in the project). Without it only global resources
	// and explicit paths load.
	Trusted bool

	// Explicit paths for this run (CLI flags or settings): files, or
	// directories read like the standard ones. Scope "temporary".
	PromptPaths []string
	SkillPaths  []string
	RulePaths   []string

	// NoSkillDiscovery and NoPromptDiscovery (--no-skills,
	// --no-prompt-templates) skip the project and agent-dir directories of
	// skills and prompt templates; the explicit paths still load.
	NoSkillDiscovery  bool
	NoPromptDiscovery bool

	// NoForeignRules skips other tools' rule files (.cursor, .windsurf,
	// .clinerules) even in a trusted project.
	NoForeignRules bool
}

// Diagnostic is a problem found while loading; the resource concerned was
// skipped or loaded in part. Diagnostics never stop loading.
type Diagnostic struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string { return d.Path + ": " + d.Message }

// Set is everything Load found.
type Set struct {
	Templates   Templates
	Skills      Skills
	Rules       Rules
	Diagnostics []Diagnostic
}

// Load reads templates, skills and rules.
func Load(opts Options) *Set {
	s := &Set{}
	var d []Diagnostic
	s.Templates, d = LoadTemplates(opts)
	s.Diagnostics = append(s.Diagnostics, d...)
	s.Skills, d = LoadSkills(opts)
	s.Diagnostics = append(s.Diagnostics, d...)
	s.Rules, d = LoadRules(opts)
	s.Diagnostics = append(s.Diagnostics, d...)
	return s
}

// Expand applies pi's prompt expansion steps that belong to resources:
// "/skill:name args" first, then "/template args". ok reports whether text
// was expanded. Extension commands and the input hook come before this and
// are the caller's.
func (s *Set) Expand(text string) (string, bool) {
	if s == nil {
		return text, false
	}
	if out, ok := s.Skills.Expand(text); ok {
		return out, true
	}
	return s.Templates.Expand(text)
}

// Commands lists the templates and skills for get_commands.
func (s *Set) Commands() []CommandInfo {
	if s == nil {
		return []CommandInfo{}
	}
	return Commands(s.Templates, s.Skills)
}

// projectDir is <cwd>/.pisces.
func projectDir(cwd string) string { return filepath.Join(cwd, ProjectDirName) }

// HasProjectResources reports whether cwd has project-local resources that
// need a trust decision: anything in its .pisces/ directory (prompts and
// skills, rules, agent definitions, extensions, settings.json, mcp.json,
// SYSTEM.md, APPEND_SYSTEM.md: every file Pisces reads there, and whatever
// else is put there, is behind the same decision), anything in pi's
// project directory .pi/ (Pisces loads only its mcp.json from it, but a
// repository that brings an agent its extensions, MCP servers or settings
// gets the same question whichever agent it was written for), or other tools' rule
// files (.cursor/rules, .windsurf/rules, .windsurfrules, .clinerules),
// which load only when trusted. Agent dirs are not project resources: the
// configured one (~/.pisces/agent, when Pisces runs in the home
// directory) and pi's ~/.pi/agent are left out. Context files (AGENTS.md,
// CLAUDE.md) are no reason: they load in any project, as in pi. Without
// any, no question needs asking.
func HasProjectResources(cwd, agentDir string) bool {
	if cwd == "" {
		return false
	}
	agent := ""
	if agentDir != "" {
		agent = ProjectKey(agentDir)
	}
	piAgent := ""
	if home, err := fsx.HomeDir(); err == nil {
		piAgent = ProjectKey(filepath.Join(home, PiProjectDirName, "agent"))
	}
	for _, pd := range []string{projectDir(cwd), filepath.Join(cwd, PiProjectDirName)} {
		if k := ProjectKey(pd); k == agent || k == piAgent {
			continue
		}
		entries, _ := os.ReadDir(pd)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(pd, e.Name())
			if k := ProjectKey(p); k == agent || k == piAgent {
				continue
			}
			if hasVisibleFile(p, 8) {
				return true
			}
		}
	}
	return len(foreignRuleSources(cwd)) > 0
}

// hasVisibleFile reports whether p is a file, or a directory holding one
// (depth levels down at most) whose path has no hidden element below p.
func hasVisibleFile(p string, depth int) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return true
	}
	if depth == 0 {
		return true // deeper than any resource layout: count it
	}
	entries, _ := os.ReadDir(p)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && hasVisibleFile(filepath.Join(p, e.Name()), depth-1) {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// absPath makes p absolute against base and expands a leading "~/"; a
// path that needs the home directory when there is none is an error (it is
// never read relative to base instead).
func absPath(base, p string) (string, error) {
	p, err := fsx.ExpandHome(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	if a, err := filepath.Abs(p); err == nil {
		return a, nil
	}
	return filepath.Clean(p), nil
}

// listFiles returns the regular files (following symlinks) directly in dir
// whose names end with one of exts, sorted by name.
func listFiles(dir string, exts ...string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		match := false
		for _, ext := range exts {
			if strings.HasSuffix(strings.ToLower(name), ext) {
				match = true
			}
		}
		if match && isFile(filepath.Join(dir, name)) {
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out // os.ReadDir sorts by name
}

// firstLine returns the first non-empty line of text, trimmed, shortened to
// max runes with "...".
func firstLine(text string, max int) string {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > max {
			return strings.TrimRight(string(r[:max]), " \t") + "..."
		}
		return l
	}
	return ""
}
