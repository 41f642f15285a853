package anthropic

import (
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// claudeCodeTools are Claude Code's tool names. With a subscription (OAuth)
// token, a tool whose name matches one of them case-insensitively is sent
// with Claude Code's casing, as pi does, and the model's calls are mapped
// back to the request's name.
var claudeCodeTools = lazy.Value[map[string]string]{New: func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
		"ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch"} {
		m[strings.ToLower(n)] = n
	}
	return m
}}

// toClaudeCode is name in Claude Code's casing when it is one of its tools.
func toClaudeCode(name string) string {
	if cc, ok := claudeCodeTools.Get()[strings.ToLower(name)]; ok {
		return cc
	}
	return name
}

// claudeCodeNames rewrites the tool names of an OAuth request: the tool
// definitions and the tool_use blocks of the history.
func claudeCodeNames(p *sdk.MessageNewParams) {
	for i := range p.Tools {
		if t := p.Tools[i].OfTool; t != nil {
			t.Name = toClaudeCode(t.Name)
		}
	}
	for i := range p.Messages {
		for j := range p.Messages[i].Content {
			if u := p.Messages[i].Content[j].OfToolUse; u != nil {
				u.Name = toClaudeCode(u.Name)
			}
		}
	}
}

// fromClaudeCode maps a tool name the model called back to the request's
// tool of the same name up to case.
func fromClaudeCode(tools []ai.ToolSpec) func(string) string {
	return func(name string) string {
		for _, t := range tools {
			if t.Name == name {
				return name
			}
		}
		for _, t := range tools {
			if strings.EqualFold(t.Name, name) {
				return t.Name
			}
		}
		return name
	}
}
