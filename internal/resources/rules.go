package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Rule interrupt modes (frontmatter interruptMode, setting ttsr.interruptMode).
const (
	InterruptNever     = "never"      // a match never aborts the stream; the rule is injected after it
	InterruptProseOnly = "prose-only" // only matches in text or thinking abort
	InterruptToolOnly  = "tool-only"  // only matches in tool-call arguments abort
	InterruptAlways    = "always"     // every match aborts
)

// Rule providers, as RuleSource.Provider.
const (
	ProviderPisces   = "pisces"
	ProviderCursor   = "cursor"
	ProviderWindsurf = "windsurf"
	ProviderCline    = "cline"
)

// RuleSource says where a rule was read ("_source" in ttsr_triggered).
type RuleSource struct {
	Provider     string `json:"provider"`
	ProviderName string `json:"providerName"`
	Path         string `json:"path"`
	Level        Scope  `json:"level"`
}

// Rule is a Markdown rule file. Rules with AlwaysApply join the system
// prompt; rules with a Condition watch the model's stream; the rest are
// listed so the model can read them when they apply.
//
// Its JSON is the rule object of the ttsr_triggered event:
// {name, path, content, globs?, alwaysApply?, description?, condition?,
// scope?, interruptMode?, _source}.
type Rule struct {
	Name          string     `json:"name"`
	Path          string     `json:"path"`
	Content       string     `json:"content"`
	Globs         []string   `json:"globs,omitempty"`
	AlwaysApply   bool       `json:"alwaysApply,omitempty"`
	Description   string     `json:"description,omitempty"`
	Condition     []string   `json:"condition,omitempty"` // regular expressions (Go syntax, mostly JS-compatible)
	Scope         []string   `json:"scope,omitempty"`     // text, thinking, tool, tool:NAME, tool:NAME(glob)
	InterruptMode string     `json:"interruptMode,omitempty"`
	Source        RuleSource `json:"_source"`

	conds  []*regexp.Regexp
	scopes []scopeSpec
}

// Rules is a list of rules, first name first.
type Rules []*Rule

// IsStream reports whether the rule watches the stream (has a condition).
func (r *Rule) IsStream() bool { return len(r.conds) > 0 }

// MatchesPath reports whether file matches one of the rule's globs.
func (r *Rule) MatchesPath(file string) bool {
	for _, g := range r.Globs {
		if MatchGlob(g, file) {
			return true
		}
	}
	return false
}

// ruleFile is a file to read as a rule, with how to interpret it.
type ruleFile struct {
	path     string
	name     string
	provider string
	scope    Scope
	always   bool // a whole-file rules format (.windsurfrules, .clinerules)
}

// providerName is the display name of a rules provider ("" when unknown).
func providerName(provider string) string {
	switch provider {
	case ProviderPisces:
		return "Pisces"
	case ProviderCursor:
		return "Cursor"
	case ProviderWindsurf:
		return "Windsurf"
	case ProviderCline:
		return "Cline"
	}
	return ""
}

func ruleName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func ruleFilesIn(dir, provider string, scope Scope, exts ...string) []ruleFile {
	var out []ruleFile
	for _, f := range listFiles(dir, exts...) {
		out = append(out, ruleFile{path: f, name: ruleName(f), provider: provider, scope: scope})
	}
	return out
}

// foreignRuleSources lists other tools' rule files in the project: Cursor
// .cursor/rules/*.mdc (and .md), Windsurf .windsurf/rules/*.md and
// .windsurfrules, Cline .clinerules (a file, or a directory of .md files).
func foreignRuleSources(cwd string) []ruleFile {
	var out []ruleFile
	out = append(out, ruleFilesIn(filepath.Join(cwd, ".cursor", "rules"), ProviderCursor, ScopeProject, ".mdc", ".md")...)
	out = append(out, ruleFilesIn(filepath.Join(cwd, ".windsurf", "rules"), ProviderWindsurf, ScopeProject, ".md")...)
	if f := filepath.Join(cwd, ".windsurfrules"); isFile(f) {
		out = append(out, ruleFile{path: f, name: "windsurfrules", provider: ProviderWindsurf, scope: ScopeProject, always: true})
	}
	cl := filepath.Join(cwd, ".clinerules")
	switch {
	case isFile(cl):
		out = append(out, ruleFile{path: cl, name: "clinerules", provider: ProviderCline, scope: ScopeProject, always: true})
	case isDir(cl):
		for _, rf := range ruleFilesIn(cl, ProviderCline, ScopeProject, ".md") {
			rf.always = true
			out = append(out, rf)
		}
	}
	return out
}

// LoadRules reads rules from, in order of precedence (the first of a name
// wins): <cwd>/.pisces/rules/ (when trusted), <agentDir>/rules/, the
// explicit RulePaths, then other tools' project files (when trusted and not
// NoForeignRules): .cursor/rules, .windsurf/rules, .windsurfrules,
// .clinerules. Rule files are .md or .mdc; the name is the file name without
// its extension.
func LoadRules(opts Options) (Rules, []Diagnostic) {
	var files []ruleFile
	var missing []Diagnostic
	if opts.Trusted && opts.Cwd != "" {
		files = append(files, ruleFilesIn(filepath.Join(projectDir(opts.Cwd), "rules"), ProviderPisces, ScopeProject, ".md", ".mdc")...)
	}
	if opts.AgentDir != "" {
		files = append(files, ruleFilesIn(filepath.Join(opts.AgentDir, "rules"), ProviderPisces, ScopeUser, ".md", ".mdc")...)
	}
	for _, p := range opts.RulePaths {
		abs, err := absPath(opts.Cwd, p)
		if err != nil {
			missing = append(missing, Diagnostic{p, err.Error()})
			continue
		}
		p = abs
		switch {
		case isDir(p):
			files = append(files, ruleFilesIn(p, ProviderPisces, ScopeTemporary, ".md", ".mdc")...)
		case isFile(p):
			files = append(files, ruleFile{path: p, name: ruleName(p), provider: ProviderPisces, scope: ScopeTemporary})
		default:
			missing = append(missing, Diagnostic{p, "rule path not found"})
		}
	}
	if opts.Trusted && opts.Cwd != "" && !opts.NoForeignRules {
		files = append(files, foreignRuleSources(opts.Cwd)...)
	}
	var out Rules
	diags := missing
	seen := map[string]*Rule{}
	for _, rf := range files {
		if prev, ok := seen[rf.name]; ok {
			diags = append(diags, Diagnostic{rf.path, "rule " + rf.name + " is shadowed by " + prev.Path})
			continue
		}
		data, err := os.ReadFile(rf.path)
		if err != nil {
			diags = append(diags, Diagnostic{rf.path, err.Error()})
			continue
		}
		r, problems := ParseRule(rf.name, rf.path, string(data), rf.provider, rf.scope)
		if rf.always && len(r.Globs) == 0 && !r.IsStream() {
			r.AlwaysApply = true // whole-file formats apply always unless limited to paths
		}
		for _, p := range problems {
			diags = append(diags, Diagnostic{rf.path, p})
		}
		seen[rf.name] = r
		out = append(out, r)
	}
	return out, diags
}

// ParseRule builds a rule from a file's text. Frontmatter keys:
// description; globs (a list, or one comma-separated string); alwaysApply;
// condition (one regular expression or a list; ttsrTrigger and ttsr_trigger
// are older names); scope (one string or a list, split at top-level commas);
// interruptMode. Windsurf's trigger (always_on, glob, model_decision,
// manual) and Cline's paths are understood too. A condition that looks like
// a file glob ("*.rs") stands for the scopes tool:edit(glob) and
// tool:write(glob) with the condition ".*". Problems (a bad regular
// expression, an unknown scope) are returned; the rest of the rule loads.
func ParseRule(name, path, text, provider string, scope Scope) (*Rule, []string) {
	fm, body := ParseFrontmatter(text)
	r := &Rule{
		Name:        name,
		Path:        path,
		Content:     strings.TrimSpace(body),
		Description: strings.TrimSpace(fm.String("description")),
		AlwaysApply: fm.Bool("alwaysApply", false) || fm.Bool("always_apply", false),
		Source: RuleSource{
			Provider:     provider,
			ProviderName: providerName(provider),
			Path:         path,
			Level:        scope,
		},
	}
	var problems []string
	globKey := "globs"
	if !fm.Has(globKey) && fm.Has("paths") { // Cline
		globKey = "paths"
	}
	for _, g := range fm.Strings(globKey) {
		for _, p := range splitTopLevel(g, ',') {
			if p = strings.TrimSpace(p); p != "" {
				r.Globs = append(r.Globs, p)
			}
		}
	}
	switch strings.ToLower(fm.String("trigger")) { // Windsurf
	case "always_on", "always":
		r.AlwaysApply = true
	}

	condKey := ""
	for _, k := range []string{"condition", "ttsrTrigger", "ttsr_trigger"} {
		if fm.Has(k) {
			condKey = k
			break
		}
	}
	var scopes []string
	for _, s := range fm.Strings("scope") {
		for _, tok := range splitTopLevel(s, ',') {
			if tok = strings.TrimSpace(tok); tok != "" {
				scopes = append(scopes, tok)
			}
		}
	}
	if condKey != "" {
		for _, c := range fm.Strings(condKey) {
			if looksLikeFileGlob(c) {
				scopes = append(scopes, "tool:edit("+c+")", "tool:write("+c+")")
				c = ".*"
			}
			re, err := compileCondition(c)
			if err != nil {
				problems = append(problems, fmt.Sprintf("condition %q: %v", c, err))
				continue
			}
			if !containsString(r.Condition, c) {
				r.Condition = append(r.Condition, c)
				r.conds = append(r.conds, re)
			}
		}
	}
	for _, tok := range scopes {
		spec, ok := parseScope(tok)
		if !ok {
			problems = append(problems, fmt.Sprintf("unknown scope %q", tok))
			continue
		}
		if !containsString(r.Scope, tok) {
			r.Scope = append(r.Scope, tok)
			r.scopes = append(r.scopes, spec)
		}
	}
	if m := strings.TrimSpace(fm.String("interruptMode")); m != "" {
		if validInterruptMode(m) {
			r.InterruptMode = m
		} else {
			problems = append(problems, fmt.Sprintf("unknown interruptMode %q", m))
		}
	}
	return r, problems
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func validInterruptMode(m string) bool {
	switch m {
	case InterruptNever, InterruptProseOnly, InterruptToolOnly, InterruptAlways:
		return true
	}
	return false
}

// looksLikeFileGlob: a condition such as "*.rs" or "src/**/*.go" is a file
// glob rather than a regular expression: it has no spaces, and either is
// not a valid regular expression or holds "**".
func looksLikeFileGlob(s string) bool {
	if s == "" || strings.ContainsFunc(s, unicode.IsSpace) || !strings.Contains(s, "*") {
		return false
	}
	if strings.Contains(s, "**") {
		return true
	}
	_, err := regexp.Compile(s)
	return err != nil
}

// compileCondition compiles a condition. A JavaScript literal with flags,
// "/source/flags", is accepted: flags i, m and s become Go's (?ims); g, u, y
// and d are ignored.
func compileCondition(c string) (*regexp.Regexp, error) {
	if strings.HasPrefix(c, "/") {
		if end := strings.LastIndexByte(c, '/'); end > 0 && end < len(c)-1 {
			flags := c[end+1:]
			if strings.Trim(flags, "gimsuyd") == "" {
				goFlags := ""
				for _, f := range "ims" {
					if strings.ContainsRune(flags, f) {
						goFlags += string(f)
					}
				}
				src := c[1:end]
				if goFlags != "" {
					src = "(?" + goFlags + ")" + src
				}
				return regexp.Compile(src)
			}
		}
	}
	return regexp.Compile(c)
}

// scopeSpec is a parsed scope token.
type scopeSpec struct {
	kind string // StreamText, StreamThinking or StreamToolCall
	tool string // tool name pattern ("" any)
	glob string // path glob ("" any)
}

// parseScope reads "text", "thinking", "tool", "tool:NAME",
// "tool:NAME(glob)" or "tool(glob)". "*" and "all" mean text and every
// tool (see Matcher).
func parseScope(tok string) (scopeSpec, bool) {
	t := strings.TrimSpace(tok)
	switch strings.ToLower(t) {
	case "text", "prose":
		return scopeSpec{kind: StreamText}, true
	case "thinking":
		return scopeSpec{kind: StreamThinking}, true
	case "tool", "tools", "toolcall", "tool:*":
		return scopeSpec{kind: StreamToolCall}, true
	}
	if !strings.HasPrefix(t, "tool") {
		return scopeSpec{}, false
	}
	rest := t[len("tool"):]
	spec := scopeSpec{kind: StreamToolCall}
	if strings.HasPrefix(rest, ":") {
		rest = rest[1:]
		i := strings.IndexByte(rest, '(')
		if i < 0 {
			spec.tool = strings.TrimSpace(rest)
			return spec, spec.tool != ""
		}
		spec.tool = strings.TrimSpace(rest[:i])
		rest = rest[i:]
	}
	if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
		return scopeSpec{}, false
	}
	spec.glob = strings.TrimSpace(rest[1 : len(rest)-1])
	if spec.tool == "*" {
		spec.tool = ""
	}
	return spec, true
}

// Find returns the rule called name, or nil.
func (rs Rules) Find(name string) *Rule {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Stream returns the rules that watch the stream.
func (rs Rules) Stream() Rules {
	var out Rules
	for _, r := range rs {
		if r.IsStream() {
			out = append(out, r)
		}
	}
	return out
}

// ForPath returns the rules (not always-apply, not stream rules) whose
// globs match file, for attaching them when the model works on it.
func (rs Rules) ForPath(file string) Rules {
	var out Rules
	for _, r := range rs {
		if !r.AlwaysApply && !r.IsStream() && r.MatchesPath(file) {
			out = append(out, r)
		}
	}
	return out
}

// AlwaysApplyText renders the always-apply rules in full for the system
// prompt, or "" when there are none.
func (rs Rules) AlwaysApplyText() string {
	var b strings.Builder
	for _, r := range rs {
		if !r.AlwaysApply || r.Content == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("# Project and user rules\n\nThese rules hold for the whole session.\n")
		}
		b.WriteString("\n## " + r.Name + "\n\n" + r.Content + "\n")
	}
	return b.String()
}

// PromptSection lists the rules the model should read on demand (neither
// always-apply nor stream rules) by name, description, file patterns and
// path, or "" when there are none.
func (rs Rules) PromptSection() string {
	var b strings.Builder
	for _, r := range rs {
		if r.AlwaysApply || r.IsStream() {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("# Rules for particular work\n\n" +
				"Each rule below applies only to some work. When one matches what you are about to do " +
				"(by its description or its file patterns), read its file with the read tool first and follow it.\n")
		}
		b.WriteString("\n- " + r.Name)
		if r.Description != "" {
			b.WriteString(": " + oneLine(r.Description))
		}
		if len(r.Globs) > 0 {
			b.WriteString(" (files: " + strings.Join(r.Globs, ", ") + ")")
		}
		b.WriteString("\n  File: " + r.Path)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
