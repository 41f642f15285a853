package task

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Agent sources.
const (
	SourceBundled = "bundled"
	SourceUser    = "user"    // <agentDir>/agents/
	SourceProject = "project" // <cwd>/.pisces/agents/
)

// AgentDef is a subagent definition: a Markdown file whose frontmatter
// gives name, description, tools and model and whose body is the
// subagent's system prompt.
type AgentDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Tools names the tools the subagent gets (before submit_result is
	// added); nil means the core's default tool set for subagents.
	Tools []string `json:"tools,omitempty"`
	// Model is a model pattern ("provider/id" or "id"); "" means the
	// parent's model.
	Model  string `json:"model,omitempty"`
	Prompt string `json:"-"` // the body: the subagent's system prompt
	Source string `json:"source"`
	Path   string `json:"path,omitempty"` // "" for bundled agents
}

//go:embed agents/*.md
var bundledAgentFiles embed.FS

//go:embed templates/*.md
var bundledTemplateFiles embed.FS

// BundledAgents returns the agents shipped with Pisces: explore, plan,
// reviewer and task.
func BundledAgents() []AgentDef {
	entries, _ := fs.ReadDir(bundledAgentFiles, "agents")
	var out []AgentDef
	for _, e := range entries {
		data, err := bundledAgentFiles.ReadFile("agents/" + e.Name())
		if err != nil {
			continue
		}
		def, err := ParseAgent(data, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			panic("task: bundled agent " + e.Name() + ": " + err.Error())
		}
		def.Source = SourceBundled
		out = append(out, def)
	}
	return out
}

// PromptTemplate is a bundled prompt template (implement,
// implement-with-critic, architect-plan). Content uses pi's template
// placeholders ($@ for all arguments).
type PromptTemplate struct {
	Name        string
	Description string
	Content     string
}

// BundledPromptTemplates returns the prompt templates that drive the task
// tool, for the core to offer next to the user's templates.
func BundledPromptTemplates() []PromptTemplate {
	entries, _ := fs.ReadDir(bundledTemplateFiles, "templates")
	var out []PromptTemplate
	for _, e := range entries {
		data, _ := bundledTemplateFiles.ReadFile("templates/" + e.Name())
		fm, body, _ := splitFrontmatter(string(data))
		out = append(out, PromptTemplate{
			Name:        strings.TrimSuffix(e.Name(), ".md"),
			Description: fm["description"].str,
			Content:     body,
		})
	}
	return out
}

// DiscoverAgents returns the bundled agents, then those of
// <agentDir>/agents/*.md (source "user"), then those of
// <cwd>/.pisces/agents/*.md (source "project"); a later definition replaces
// an earlier one of the same name. The result is sorted by name. Files
// that cannot be read or parsed are reported in errs and skipped.
func DiscoverAgents(agentDir, cwd string) (agents []AgentDef, errs []error) {
	byName := map[string]AgentDef{}
	for _, a := range BundledAgents() {
		byName[a.Name] = a
	}
	load := func(dir, source string) {
		if dir == "" {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			data, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			def, err := ParseAgent(data, strings.TrimSuffix(e.Name(), ".md"))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
				continue
			}
			def.Source, def.Path = source, path
			byName[def.Name] = def
		}
	}
	if agentDir != "" {
		load(filepath.Join(agentDir, "agents"), SourceUser)
	}
	if cwd != "" {
		load(ProjectAgentsDir(cwd), SourceProject)
	}
	for _, a := range byName {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].Name < agents[j].Name })
	return agents, errs
}

// ProjectAgentsDir is <cwd>/.pisces/agents.
func ProjectAgentsDir(cwd string) string { return filepath.Join(cwd, ".pisces", "agents") }

// ParseAgent reads an agent file. defaultName (the file name without .md)
// is used when the frontmatter has no name. The frontmatter is a small YAML
// subset: "key: value" lines, quoted strings, and lists written either
// inline ("[a, b]" or "a, b") or as "- item" lines.
func ParseAgent(data []byte, defaultName string) (AgentDef, error) {
	fm, body, err := splitFrontmatter(string(data))
	if err != nil {
		return AgentDef{}, err
	}
	def := AgentDef{
		Name:        strings.TrimSpace(fm["name"].str),
		Description: fm["description"].str,
		Model:       strings.TrimSpace(fm["model"].str),
		Prompt:      strings.TrimSpace(body),
	}
	if def.Name == "" {
		def.Name = defaultName
	}
	if def.Name == "" {
		return AgentDef{}, errors.New("agent has no name")
	}
	if strings.ContainsAny(def.Name, " \t\n/\\") {
		return AgentDef{}, fmt.Errorf("invalid agent name %q", def.Name)
	}
	if t, ok := fm["tools"]; ok {
		list := t.list
		if list == nil {
			list = splitList(t.str)
		}
		def.Tools = []string{}
		for _, name := range list {
			if name = strings.TrimSpace(name); name != "" {
				def.Tools = append(def.Tools, name)
			}
		}
	}
	return def, nil
}

type fmValue struct {
	str  string
	list []string // set for "- item" lists
}

// splitFrontmatter separates a leading "---" block from the body. A file
// without one is all body.
func splitFrontmatter(text string) (map[string]fmValue, string, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	fm := map[string]fmValue{}
	if !strings.HasPrefix(text, "---\n") {
		return fm, text, nil
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	var head, body string
	switch {
	case strings.HasPrefix(rest, "---"):
		head, body = "", strings.TrimPrefix(rest[3:], "\n")
	case end < 0:
		return nil, "", errors.New("frontmatter is not closed with ---")
	default:
		head = rest[:end]
		body = rest[end+4:]
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		} else {
			body = ""
		}
	}
	var key string
	sc := bufio.NewScanner(strings.NewReader(head))
	sc.Buffer(nil, 1024*1024) // grows as needed (64 kB per call was start-up garbage)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if key == "" {
				return nil, "", fmt.Errorf("frontmatter line %d: list item without a key", n)
			}
			v := fm[key]
			v.list = append(v.list, unquote(strings.TrimSpace(strings.TrimPrefix(trimmed, "-"))))
			fm[key] = v
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			// A continuation of the previous value (folded).
			if key == "" {
				return nil, "", fmt.Errorf("frontmatter line %d: unexpected indentation", n)
			}
			v := fm[key]
			if v.str != "" {
				v.str += " "
			}
			v.str += trimmed
			fm[key] = v
			continue
		}
		i := strings.IndexByte(line, ':')
		if i <= 0 {
			return nil, "", fmt.Errorf("frontmatter line %d: expected \"key: value\"", n)
		}
		key = strings.TrimSpace(line[:i])
		val := strings.TrimSpace(line[i+1:])
		if val == "|" || val == ">" || val == "|-" || val == ">-" {
			val = ""
		}
		fm[key] = fmValue{str: unquote(val)}
	}
	return fm, body, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		inner := s[1 : len(s)-1]
		if s[0] == '"' {
			r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t")
			return r.Replace(inner)
		}
		return strings.ReplaceAll(inner, "''", "'")
	}
	return s
}

// splitList reads "[a, b]", "a, b" or "a b" into its items.
func splitList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if part = unquote(strings.TrimSpace(part)); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// findAgent looks name up (exactly, then case-insensitively).
func findAgent(agents []AgentDef, name string) (AgentDef, bool) {
	for _, a := range agents {
		if a.Name == name {
			return a, true
		}
	}
	for _, a := range agents {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return AgentDef{}, false
}
