package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/task"
)

// Where a resource comes from, as `pisces list` and `pisces config` say.
const (
	fromAgentDir = "agent dir"
	fromProject  = "project"
	fromSettings = "settings"
	fromBuiltin  = "built in"
)

// resourceItem is one extension, skill or prompt template found.
type resourceItem struct {
	Name    string
	Path    string
	Source  string // fromAgentDir, fromProject, fromSettings, fromBuiltin or the flag that named it
	Enabled bool   // a run with the same options loads it
	Why     string // why it does not load
}

// inventory is every resource Pisces finds, loaded or not.
type inventory struct {
	Extensions []resourceItem
	Skills     []resourceItem
	Templates  []resourceItem
	Problems   []string
}

const notTrusted = "project not trusted (--approve loads it)"

// inventory finds the resources a run with these options would load, and
// those it finds but would not load (an untrusted project's, the ones
// --no-extensions, --no-skills or --no-prompt-templates turn off, and
// those another of the same name shadows). Nothing is started.
func (env *environment) inventory() *inventory {
	a := env.args
	inv := &inventory{}

	// Extensions.
	loaded := map[string]bool{}
	actual := env.extensionOptions()
	if !(actual.NoDiscovery && len(actual.Paths) == 0) {
		found, errs := extensions.Discover(actual)
		for _, f := range found {
			loaded[f.Path] = true
		}
		for _, e := range errs {
			inv.Problems = append(inv.Problems, e.Error())
		}
	}
	everything := actual
	everything.NoDiscovery = false
	everything.ProjectTrusted = true
	everything.Paths = append(append([]string(nil), env.settings.Extensions()...), a.Extensions...)
	found, _ := extensions.Discover(everything)
	for _, f := range found {
		it := resourceItem{Name: extensionName(f.Path), Path: f.Path, Enabled: loaded[f.Path]}
		switch {
		case f.Scope == extensions.ScopeUser:
			it.Source = fromAgentDir
		case f.Scope == extensions.ScopeProject:
			it.Source = fromProject
		case contains(a.Extensions, f.Given):
			it.Source = "-e"
		default:
			it.Source = fromSettings
		}
		if !it.Enabled {
			switch {
			case it.Source == fromProject && !env.trusted:
				it.Why = notTrusted
			case a.NoExtensions:
				it.Why = "--no-extensions"
			}
		}
		inv.Extensions = append(inv.Extensions, it)
	}

	// Skills and prompt templates: what a run loads, then what each place
	// holds on its own (so that those another one shadows are listed too).
	// A path that cannot be expanded (~ without a home directory) is kept
	// as given: it then shows up as a resource that fails to load.
	skillPaths, err := env.absPaths(a.Skills)
	if err != nil {
		skillPaths = a.Skills
	}
	promptPaths, err := env.absPaths(a.PromptTemplates)
	if err != nil {
		promptPaths = a.PromptTemplates
	}
	opts := resources.Options{AgentDir: env.agentDir, Cwd: env.cwd, Trusted: env.trusted,
		SkillPaths: skillPaths, PromptPaths: promptPaths,
		NoSkillDiscovery: a.NoSkills, NoPromptDiscovery: a.NoPromptTemplates}
	places := []resources.Options{
		{Cwd: env.cwd, Trusted: true},
		{AgentDir: env.agentDir},
		{Cwd: env.cwd, SkillPaths: opts.SkillPaths, PromptPaths: opts.PromptPaths, NoSkillDiscovery: true, NoPromptDiscovery: true},
	}
	var problems []resources.Diagnostic

	skills, diags := resources.LoadSkills(opts)
	problems = append(problems, diags...)
	var skillItems, skillLoaded []resourceItem
	for _, p := range places {
		found, _ := resources.LoadSkills(p)
		for _, s := range found {
			skillItems = append(skillItems, resourceItem{Name: s.Name, Path: s.Path, Source: scopeSource(s.Scope, "--skill")})
		}
	}
	for _, s := range skills {
		skillLoaded = append(skillLoaded, resourceItem{Name: s.Name, Path: s.Path})
	}
	inv.Skills = settle(skillItems, skillLoaded, env.trusted, a.NoSkills, "--no-skills")

	templates, diags := resources.LoadTemplates(opts)
	problems = append(problems, diags...)
	var tplItems, tplLoaded []resourceItem
	for _, p := range places {
		found, _ := resources.LoadTemplates(p)
		for _, t := range found {
			tplItems = append(tplItems, resourceItem{Name: t.Name, Path: t.Path, Source: scopeSource(t.Scope, "--prompt-template")})
		}
	}
	for _, t := range templates {
		tplLoaded = append(tplLoaded, resourceItem{Name: t.Name, Path: t.Path})
	}
	// The task tool's bundled templates load after the others, unless one
	// of the same name is loaded (as the core does).
	for _, t := range task.BundledPromptTemplates() {
		it := resourceItem{Name: t.Name, Path: "builtin:" + t.Name, Source: fromBuiltin}
		tplItems = append(tplItems, it)
		if !hasName(tplLoaded, t.Name) {
			tplLoaded = append(tplLoaded, it)
		}
	}
	inv.Templates = settle(tplItems, tplLoaded, env.trusted, a.NoPromptTemplates, "--no-prompt-templates")

	// Shadowing is shown with the resource; the other problems are listed.
	shadowed := map[string]bool{}
	for _, it := range append(append([]resourceItem(nil), inv.Skills...), inv.Templates...) {
		if strings.HasPrefix(it.Why, "shadowed") {
			shadowed[it.Path] = true
		}
	}
	for _, d := range problems {
		if !shadowed[d.Path] {
			inv.Problems = append(inv.Problems, d.String())
		}
	}
	return inv
}

// settle removes duplicates from items (the same file found twice), marks
// those that load and says why the others do not.
func settle(items, loaded []resourceItem, trusted, off bool, offFlag string) []resourceItem {
	var out []resourceItem
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Path] {
			continue
		}
		seen[it.Path] = true
		for _, l := range loaded {
			if l.Path == it.Path {
				it.Enabled = true
			}
		}
		if !it.Enabled {
			switch {
			case it.Source == fromProject && !trusted:
				it.Why = notTrusted
			case off && (it.Source == fromProject || it.Source == fromAgentDir):
				it.Why = offFlag
			default:
				for _, l := range loaded {
					if l.Name == it.Name {
						it.Why = "shadowed by " + l.Path
					}
				}
			}
		}
		out = append(out, it)
	}
	return out
}

func hasName(items []resourceItem, name string) bool {
	for _, it := range items {
		if it.Name == name {
			return true
		}
	}
	return false
}

func scopeSource(s resources.Scope, flag string) string {
	switch s {
	case resources.ScopeUser:
		return fromAgentDir
	case resources.ScopeProject:
		return fromProject
	}
	return flag
}

// extensionName is an extension's file name (its directory's name for a
// directory extension started through main).
func extensionName(path string) string {
	if base := filepath.Base(path); base != "main" {
		return base
	}
	return filepath.Base(filepath.Dir(path))
}

// writeInventory prints the inventory; withState adds [x]/[ ] and the
// reason a resource does not load.
func writeInventory(w io.Writer, inv *inventory, withState bool) {
	section := func(title string, items []resourceItem) {
		fmt.Fprintf(w, "\n%s (%d):\n", title, len(items))
		if len(items) == 0 {
			fmt.Fprintln(w, "  (none)")
			return
		}
		nameW, srcW := 0, 0
		for _, it := range items {
			nameW = max(nameW, len(it.Name))
			srcW = max(srcW, len(it.Source))
		}
		for _, it := range items {
			var b strings.Builder
			b.WriteString("  ")
			if withState {
				if it.Enabled {
					b.WriteString("[x] ")
				} else {
					b.WriteString("[ ] ")
				}
			}
			fmt.Fprintf(&b, "%-*s  %-*s  %s", nameW, it.Name, srcW, it.Source, it.Path)
			if withState && !it.Enabled && it.Why != "" {
				fmt.Fprintf(&b, "  (%s)", it.Why)
			}
			fmt.Fprintln(w, b.String())
		}
	}
	section("Extensions", inv.Extensions)
	section("Skills", inv.Skills)
	section("Prompt templates", inv.Templates)
	if len(inv.Problems) > 0 {
		fmt.Fprintln(w, "\nProblems:")
		for _, p := range inv.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}
