package core

import (
	"github.com/pisces-agent/pisces/internal/prompt"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/task"
)

// loadResources reads prompt templates, skills and rules for the current
// project (project-local ones only when the project is trusted).
func (s *Session) loadResources() {
	s.mu.Lock()
	opts := resources.Options{AgentDir: s.opts.AgentDir, Cwd: s.cwd, Trusted: s.trusted,
		SkillPaths: s.opts.SkillPaths, PromptPaths: s.opts.PromptPaths,
		NoSkillDiscovery: s.opts.NoSkills, NoPromptDiscovery: s.opts.NoPromptTemplates}
	s.mu.Unlock()
	set := resources.Load(opts)
	for _, d := range set.Diagnostics {
		s.logf("%s", d.String())
	}
	// The task tool's bundled templates (implement, implement-with-critic,
	// architect-plan) come last: a user's template of the same name wins.
	for _, t := range task.BundledPromptTemplates() {
		if set.Templates.Find(t.Name) == nil {
			set.Templates = append(set.Templates, &resources.Template{
				Name: t.Name, Description: t.Description, Content: t.Content,
				Path: "builtin:" + t.Name, Scope: resources.ScopeTemporary,
			})
		}
	}
	s.mu.Lock()
	s.resources = set
	s.mu.Unlock()
}

func (s *Session) resourceSet() *resources.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resources
}

// expand applies skill and template expansion to a prompt.
func (s *Session) expand(text string) string {
	if out, ok := s.resourceSet().Expand(text); ok {
		return out
	}
	return text
}

// resourceSections are the system prompt's skills and rules sections.
func (s *Session) resourceSections() []prompt.Section {
	set := s.resourceSet()
	if set == nil {
		return nil
	}
	var out []prompt.Section
	if t := set.Skills.PromptSection(); t != "" {
		out = append(out, prompt.Section{Name: "skills", Text: t})
	}
	rules := set.Rules.AlwaysApplyText()
	if t := set.Rules.PromptSection(); t != "" {
		if rules != "" {
			rules += "\n"
		}
		rules += t
	}
	if rules != "" {
		out = append(out, prompt.Section{Name: "project_rules", Text: rules})
	}
	return out
}

// Commands lists the slash commands (templates and skills) for get_commands.
func (s *Session) Commands() []resources.CommandInfo {
	return append(s.extensionCommands(), s.resourceSet().Commands()...)
}

// projectSettingsDir is the directory whose .pisces/settings.json applies
// ("" when the project is not trusted).
func (s *Session) projectSettingsDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.trusted {
		return ""
	}
	return s.cwd
}

// ReloadResources reads settings, templates, skills, rules and context
// files again and announces it with session_changed {reason:"reload"}.
func (s *Session) ReloadResources() []resources.CommandInfo {
	if err := s.opts.Settings.SetProject(s.projectSettingsDir()); err != nil {
		s.logf("%v", err)
	}
	s.loadResources()
	s.emitSessionChanged(ChangeReload)
	return s.Commands()
}
