// Package prompt builds the system prompt: a base text (ours, or SYSTEM.md, or
// --system-prompt), the active tools, guidelines, text appended by
// APPEND_SYSTEM.md and --append-system-prompt, the project context files
// (AGENTS.md / CLAUDE.md), and the date and working directory.
//
// The prompt is also returned as named sections in the order pi 1.5 uses for
// its system message (preamble, tools, rules, docs, cwd), so a system message
// can carry them; joining the non-empty sections with a blank line gives the
// full text.
package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/fsx"
)

// Section names, in the order they appear.
const (
	SectionPreamble = "preamble"
	SectionTools    = "tools"
	SectionRules    = "rules"
	SectionDocs     = "docs"
	SectionCwd      = "cwd"
)

// File names read from <cwd>/.pisces/ first (only when the project is
// trusted: Options.ProjectTrusted), else from the agent dir.
const (
	SystemFileName       = "SYSTEM.md"        // replaces the base text
	AppendSystemFileName = "APPEND_SYSTEM.md" // appended to the rules
	ProjectDirName       = ".pisces"
)

// Section is one named part of the system prompt.
type Section struct {
	Name string
	Text string
}

// ToolInfo is an active tool as the prompt lists it. Only the first
// non-empty line of Description is shown.
type ToolInfo struct {
	Name        string
	Description string
}

// Options are the inputs of Build.
type Options struct {
	Cwd      string
	AgentDir string
	Tools    []ToolInfo // the active tools, in the order to list them

	// ProjectTrusted lets <Cwd>/.pisces/SYSTEM.md and APPEND_SYSTEM.md
	// apply; without it only the agent dir's are read (a repository does not
	// write the system prompt of an agent that has not been told to trust
	// it). Context files are read either way.
	ProjectTrusted bool

	// CustomPrompt (--system-prompt) replaces the base text, SYSTEM.md
	// included. It may be text or the path of a file whose contents are used.
	CustomPrompt string
	// AppendPrompt (--append-system-prompt, repeatable): each entry is text,
	// or the path of a file whose contents are used. Appended after
	// APPEND_SYSTEM.md.
	AppendPrompt []string

	// ContextFiles are the project context files. When nil (and
	// NoContextFiles is false) Build discovers them with LoadContextFiles;
	// pass an empty non-nil slice for none.
	ContextFiles   []ContextFile
	NoContextFiles bool

	Now time.Time // zero means time.Now()

	// Extra are further sections (skills, rules, extensions' additions),
	// placed after the context files and before the working directory.
	Extra []Section
}

// Build returns the system prompt and its sections. Empty sections are left
// out of both.
//
// With our base text the sections are: preamble (who the assistant is),
// tools (the active tools with one-line descriptions), rules (guidelines,
// then the appended texts), docs (the context files, each under its path)
// and cwd (the date as YYYY-MM-DD and the working directory). A custom base
// (--system-prompt or SYSTEM.md) becomes the preamble and replaces the tools
// list and the guidelines; appended texts, docs and cwd still follow.
func Build(opts Options) (string, []Section) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}

	var sections []Section
	add := func(name, text string) {
		if text = strings.TrimSpace(text); text != "" {
			sections = append(sections, Section{Name: name, Text: text})
		}
	}

	custom := ""
	if opts.CustomPrompt != "" {
		custom = resolveInput(opts.CustomPrompt, cwd)
	} else if text, ok := findPromptFile(SystemFileName, cwd, opts.AgentDir, opts.ProjectTrusted); ok {
		custom = text
	}

	var rules []string
	if custom != "" {
		add(SectionPreamble, custom)
	} else {
		add(SectionPreamble, preamble(len(opts.Tools) > 0))
		add(SectionTools, toolList(opts.Tools))
		rules = append(rules, guidelines(opts.Tools))
	}
	if text, ok := findPromptFile(AppendSystemFileName, cwd, opts.AgentDir, opts.ProjectTrusted); ok {
		rules = append(rules, text)
	}
	for _, a := range opts.AppendPrompt {
		rules = append(rules, resolveInput(a, cwd))
	}
	add(SectionRules, joinNonEmpty(rules))

	if !opts.NoContextFiles {
		files := opts.ContextFiles
		if files == nil {
			files = LoadContextFiles(opts.AgentDir, cwd)
		}
		add(SectionDocs, docs(files))
	}
	for _, x := range opts.Extra {
		add(x.Name, x.Text)
	}
	add(SectionCwd, "Today's date: "+now.Format("2006-01-02")+"\nWorking directory: "+cwd)

	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = s.Text
	}
	return strings.Join(texts, "\n\n"), sections
}

func preamble(haveTools bool) string {
	if !haveTools {
		return "You are an expert coding assistant helping the user with their software project. " +
			"Answer their questions and help them plan and write code."
	}
	return "You are an expert coding assistant working inside the user's software project. " +
		"You act through the tools listed below: look at the code, run commands and change files " +
		"to carry out what the user asks, then report what you did."
}

func toolList(tools []ToolInfo) string {
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Tools you can call:")
	for _, t := range tools {
		b.WriteString("\n- ")
		b.WriteString(t.Name)
		if d := firstLine(t.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	return b.String()
}

func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func guidelines(tools []ToolInfo) string {
	has := map[string]bool{}
	for _, t := range tools {
		has[t.Name] = true
	}
	var g []string
	if has["read"] {
		g = append(g, "Read a file before you change it; do not guess at its contents.")
	}
	var explore []string
	for _, name := range []string{"grep", "find", "ls"} {
		if has[name] {
			explore = append(explore, name)
		}
	}
	switch {
	case len(explore) > 0:
		g = append(g, "To explore the project, prefer the "+strings.Join(explore, ", ")+" tools over shell commands.")
	case has["bash"]:
		g = append(g, "To explore the project, use bash with commands such as ls, find and grep.")
	}
	if has["edit"] {
		g = append(g, "Make precise, targeted changes with edit; the old text has to match the file exactly.")
	}
	if has["write"] {
		g = append(g, "Use write only for new files or to replace a whole file.")
	}
	if has["bash"] {
		g = append(g, "Use bash to build, test and run things; avoid commands that wait for input.")
	}
	g = append(g,
		"When a tool reports an error, read it and change your approach rather than repeating the call.",
		"Keep your replies short and to the point.",
		"Name the paths of the files you looked at or changed.",
	)
	return "Guidelines:\n- " + strings.Join(g, "\n- ")
}

func docs(files []ContextFile) string {
	var parts []string
	for _, f := range files {
		content := strings.TrimSpace(f.Content)
		if content == "" {
			continue
		}
		parts = append(parts, "## "+f.Path+"\n\n"+content)
	}
	if len(parts) == 0 {
		return ""
	}
	return "# Project context\n\nThe user keeps these instruction files for this project. Follow them.\n\n" +
		strings.Join(parts, "\n\n")
}

func joinNonEmpty(parts []string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// findPromptFile reads name from <cwd>/.pisces/ (a trusted project only),
// else from agentDir.
func findPromptFile(name, cwd, agentDir string, projectTrusted bool) (string, bool) {
	var dirs []string
	if cwd != "" && projectTrusted {
		dirs = append(dirs, filepath.Join(cwd, ProjectDirName))
	}
	if agentDir != "" {
		dirs = append(dirs, agentDir)
	}
	for _, dir := range dirs {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return string(data), true
		}
	}
	return "", false
}

// resolveInput returns the contents of the file that value names (an
// absolute path, a path relative to cwd, or ~/...), or value itself when it
// does not name a readable regular file.
func resolveInput(value, cwd string) string {
	if strings.ContainsAny(value, "\n\r") || len(value) > 4096 || strings.TrimSpace(value) == "" {
		return value
	}
	path, err := fsx.ExpandHome(value)
	if err != nil {
		return value // no home directory: not a file we can find
	}
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return value
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return value
	}
	return string(data)
}
