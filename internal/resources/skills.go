package resources

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pisces-agent/pisces/internal/lazy"
)

// SkillFileName is the file that makes a directory a skill.
const SkillFileName = "SKILL.md"

// Skill is a directory of instructions for a kind of task, described by the
// frontmatter of its SKILL.md.
type Skill struct {
	Name        string // frontmatter name, else the directory name
	Description string // frontmatter description (required)
	Path        string // absolute path of SKILL.md
	BaseDir     string // the skill's directory
	Body        string // SKILL.md without frontmatter, as loaded
	Scope       Scope
	// DisableModelInvocation (frontmatter "disable-model-invocation") keeps
	// the skill out of the system prompt; /skill:name still works.
	DisableModelInvocation bool
}

// Skills is a list of skills, first name first.
type Skills []*Skill

var skillNameRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`) }}

// LoadSkills finds SKILL.md files under <cwd>/.pisces/skills/ (when
// trusted), <agentDir>/skills/ and the explicit SkillPaths (a SKILL.md, a
// skill directory, or a directory of skills). A directory holding SKILL.md
// is one skill and is not searched further; other directories are searched
// recursively. A skill without a description is skipped; a name that is not
// lowercase letters, digits and hyphens (at most 64) is loaded with a
// warning. The first of a name wins (project, user, explicit paths).
// NoSkillDiscovery leaves out the project and agent-dir skills.
func LoadSkills(opts Options) (Skills, []Diagnostic) {
	var out Skills
	var diags []Diagnostic
	seen := map[string]*Skill{}
	add := func(file string, scope Scope) {
		s, warn, err := readSkill(file, scope)
		if err != nil {
			diags = append(diags, Diagnostic{file, err.Error()})
			return
		}
		if warn != "" {
			diags = append(diags, Diagnostic{file, warn})
		}
		if s == nil {
			return
		}
		if prev, ok := seen[s.Name]; ok {
			diags = append(diags, Diagnostic{file, "skill " + s.Name + " is shadowed by " + prev.Path})
			return
		}
		seen[s.Name] = s
		out = append(out, s)
	}
	scan := func(root string, scope Scope) {
		for _, f := range findSkillFiles(root, 0) {
			add(f, scope)
		}
	}
	if opts.Trusted && opts.Cwd != "" && !opts.NoSkillDiscovery {
		scan(filepath.Join(projectDir(opts.Cwd), "skills"), ScopeProject)
	}
	if opts.AgentDir != "" && !opts.NoSkillDiscovery {
		scan(filepath.Join(opts.AgentDir, "skills"), ScopeUser)
	}
	for _, p := range opts.SkillPaths {
		abs, err := absPath(opts.Cwd, p)
		if err != nil {
			diags = append(diags, Diagnostic{p, err.Error()})
			continue
		}
		p = abs
		switch {
		case isDir(p):
			scan(p, ScopeTemporary)
		case isFile(p):
			add(p, ScopeTemporary)
		default:
			diags = append(diags, Diagnostic{p, "skill path not found"})
		}
	}
	return out, diags
}

// findSkillFiles returns dir/SKILL.md if it exists, else those of its
// subdirectories (recursively, sorted, hidden and node_modules skipped).
func findSkillFiles(dir string, depth int) []string {
	if depth > 8 {
		return nil
	}
	if f := filepath.Join(dir, SkillFileName); isFile(f) {
		return []string{f}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		if sub := filepath.Join(dir, name); isDir(sub) {
			out = append(out, findSkillFiles(sub, depth+1)...)
		}
	}
	return out
}

func readSkill(file string, scope Scope) (*Skill, string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	fm, body := ParseFrontmatter(string(data))
	dir := filepath.Dir(file)
	s := &Skill{
		Name:                   strings.TrimSpace(fm.String("name")),
		Description:            strings.TrimSpace(fm.String("description")),
		Path:                   file,
		BaseDir:                dir,
		Body:                   strings.TrimSpace(body),
		Scope:                  scope,
		DisableModelInvocation: fm.Bool("disable-model-invocation", false),
	}
	if s.Name == "" {
		s.Name = filepath.Base(dir)
	}
	if s.Description == "" {
		return nil, "skill " + s.Name + " has no description and is skipped", nil
	}
	warn := ""
	if len(s.Name) > 64 || !skillNameRE.Get().MatchString(s.Name) {
		warn = "skill name " + `"` + s.Name + `"` + " should be lowercase letters, digits and hyphens (at most 64)"
	}
	return s, warn, nil
}

// Find returns the skill called name, or nil.
func (ss Skills) Find(name string) *Skill {
	for _, s := range ss {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// SkillCommandPrefix starts a skill command in a prompt.
const SkillCommandPrefix = "/skill:"

// Expand replaces "/skill:name args" by the skill's block, as pi does:
//
//	<skill name="NAME" location="PATH">
//	References are relative to BASEDIR.
//
//	BODY
//	</skill>
//
// followed by "\n\n" and the trimmed arguments when there are any. The
// body is read again from SKILL.md (frontmatter removed, trimmed), so edits
// apply without a reload; if that fails the body from load time is used.
func (ss Skills) Expand(text string) (string, bool) {
	if !strings.HasPrefix(text, SkillCommandPrefix) {
		return text, false
	}
	rest := text[len(SkillCommandPrefix):]
	name, args := rest, ""
	if i := strings.IndexAny(rest, " \t\n"); i >= 0 {
		name, args = rest[:i], strings.TrimSpace(rest[i+1:])
	}
	s := ss.Find(name)
	if s == nil {
		return text, false
	}
	block := s.Block()
	if args != "" {
		return block + "\n\n" + args, true
	}
	return block, true
}

// Block renders the skill as the "<skill …>" block of a /skill: command.
func (s *Skill) Block() string {
	body := s.Body
	if data, err := os.ReadFile(s.Path); err == nil {
		_, b := ParseFrontmatter(string(data))
		body = strings.TrimSpace(b)
	}
	return `<skill name="` + s.Name + `" location="` + s.Path + `">` + "\n" +
		"References are relative to " + s.BaseDir + ".\n\n" +
		body + "\n</skill>"
}

// PromptSection describes the skills for the system prompt, or "" when none
// may be invoked by the model. The model is told to read a skill's file
// when a task fits it.
func (ss Skills) PromptSection() string {
	var items []*Skill
	for _, s := range ss {
		if !s.DisableModelInvocation {
			items = append(items, s)
		}
	}
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Skills\n\n")
	b.WriteString("A skill is a folder of instructions for one kind of task. " +
		"Before you start a task that fits a skill's description, read that skill's SKILL.md " +
		"with the read tool and follow it. Paths mentioned in a skill are relative to the folder " +
		"its SKILL.md is in.\n")
	for _, s := range items {
		b.WriteString("\n- " + s.Name + ": " + oneLine(s.Description) + "\n  File: " + s.Path)
	}
	b.WriteString("\n")
	return b.String()
}

// oneLine collapses whitespace runs (newlines included) into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
