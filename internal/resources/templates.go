package resources

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Template is a prompt template: a Markdown file whose body replaces
// "/name args" in a prompt.
type Template struct {
	Name         string // the file name without ".md"
	Description  string // frontmatter description, else the body's first line
	ArgumentHint string // frontmatter "argument-hint", if any
	Content      string // the body, frontmatter removed
	Path         string // absolute file path
	Dir          string // the directory it was found in
	Scope        Scope
}

// Templates is a list of templates, first name first.
type Templates []*Template

// descriptionMax is how long a description taken from the body may be.
const descriptionMax = 60

// LoadTemplates reads the ".md" files directly in <agentDir>/prompts/,
// <cwd>/.pisces/prompts/ (when trusted) and the explicit PromptPaths. When
// two share a name the first wins, in the order project, user, explicit
// paths; the loser is reported as a diagnostic. NoPromptDiscovery leaves
// out the project and agent-dir templates.
func LoadTemplates(opts Options) (Templates, []Diagnostic) {
	var out Templates
	var diags []Diagnostic
	seen := map[string]*Template{}
	add := func(file string, scope Scope) {
		t, err := readTemplate(file, scope)
		if err != nil {
			diags = append(diags, Diagnostic{file, err.Error()})
			return
		}
		if prev, ok := seen[t.Name]; ok {
			diags = append(diags, Diagnostic{file, "prompt template /" + t.Name + " is shadowed by " + prev.Path})
			return
		}
		seen[t.Name] = t
		out = append(out, t)
	}
	if opts.Trusted && opts.Cwd != "" && !opts.NoPromptDiscovery {
		for _, f := range listFiles(filepath.Join(projectDir(opts.Cwd), "prompts"), ".md") {
			add(f, ScopeProject)
		}
	}
	if opts.AgentDir != "" && !opts.NoPromptDiscovery {
		for _, f := range listFiles(filepath.Join(opts.AgentDir, "prompts"), ".md") {
			add(f, ScopeUser)
		}
	}
	for _, p := range opts.PromptPaths {
		abs, err := absPath(opts.Cwd, p)
		if err != nil {
			diags = append(diags, Diagnostic{p, err.Error()})
			continue
		}
		p = abs
		switch {
		case isDir(p):
			for _, f := range listFiles(p, ".md") {
				add(f, ScopeTemporary)
			}
		case isFile(p):
			add(p, ScopeTemporary)
		default:
			diags = append(diags, Diagnostic{p, "prompt template path not found"})
		}
	}
	return out, diags
}

func readTemplate(file string, scope Scope) (*Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	fm, body := ParseFrontmatter(string(data))
	t := &Template{
		Name:         strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)),
		Description:  strings.TrimSpace(fm.String("description")),
		ArgumentHint: fm.String("argument-hint"),
		Content:      body,
		Path:         file,
		Dir:          filepath.Dir(file),
		Scope:        scope,
	}
	if t.Description == "" {
		t.Description = firstLine(body, descriptionMax)
	}
	return t, nil
}

// Find returns the template called name, or nil.
func (ts Templates) Find(name string) *Template {
	for _, t := range ts {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Expand replaces "/name args" by the template called name with its
// arguments substituted (see SubstituteArgs). Text that is not a slash
// command of a known template is returned unchanged with ok false.
func (ts Templates) Expand(text string) (string, bool) {
	name, args, ok := splitCommand(text)
	if !ok {
		return text, false
	}
	t := ts.Find(name)
	if t == nil {
		return text, false
	}
	return SubstituteArgs(t.Content, ParseArgs(args)), true
}

// splitCommand splits "/name rest" into name and rest (the text after the
// first space, as written).
func splitCommand(text string) (name, rest string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	body := text[1:]
	if i := strings.IndexAny(body, " \t\n"); i >= 0 {
		name, rest = body[:i], body[i+1:]
	} else {
		name = body
	}
	return name, rest, name != ""
}

// ParseArgs splits a command's argument text as a shell would, simply:
// whitespace separates arguments, and "double" or 'single' quotes keep
// spaces inside one argument (the quotes are removed). Empty arguments are
// dropped.
func ParseArgs(s string) []string {
	var args []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// SubstituteArgs fills a template's placeholders in one pass (text coming
// from arguments is never substituted again):
//
//	$1, $2, …       the n-th argument ("" when missing)
//	$@, $ARGUMENTS  all arguments joined with spaces
//	${@:N}          the arguments from the N-th on (1-based)
//	${@:N:L}        L arguments from the N-th
//
// Any other "$" is kept.
func SubstituteArgs(content string, args []string) string {
	if !strings.Contains(content, "$") {
		return content
	}
	all := strings.Join(args, " ")
	var b strings.Builder
	for i := 0; i < len(content); i++ {
		c := content[i]
		if c != '$' || i+1 >= len(content) {
			b.WriteByte(c)
			continue
		}
		rest := content[i+1:]
		switch {
		case rest[0] >= '0' && rest[0] <= '9':
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(rest[:j])
			if n >= 1 && n <= len(args) {
				b.WriteString(args[n-1])
			}
			i += j
		case rest[0] == '@':
			b.WriteString(all)
			i++
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(all)
			i += len("ARGUMENTS")
		case strings.HasPrefix(rest, "{@:"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			spec := strings.Split(rest[3:end], ":")
			start, err := strconv.Atoi(spec[0])
			if err != nil || len(spec) > 2 {
				b.WriteByte(c)
				continue
			}
			if start < 1 {
				start = 1
			}
			slice := []string{}
			if start <= len(args) {
				slice = args[start-1:]
			}
			if len(spec) == 2 {
				l, err := strconv.Atoi(spec[1])
				if err != nil || l < 0 {
					b.WriteByte(c)
					continue
				}
				if l < len(slice) {
					slice = slice[:l]
				}
			}
			b.WriteString(strings.Join(slice, " "))
			i += end + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
