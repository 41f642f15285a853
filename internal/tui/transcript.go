package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/pisces-agent/pisces/internal/ai"
)

// blockKind says what a transcript block shows.
type blockKind int

const (
	kindUser blockKind = iota
	kindAssistant
	kindTool
	kindBash // a command the user ran with !cmd
	kindInfo
	kindError
	kindWarning
	kindSummary // compaction and branch summaries
)

// collapsedLines is how many lines of tool output show until ctrl+o
// expands them.
const collapsedLines = 10

// block is one item of the transcript. Its rendered lines are kept until
// its content or the width changes.
type block struct {
	kind blockKind
	text string // user, info, error, summary text; bash command output

	// assistant
	content      []ai.Content
	stopReason   string
	errorMessage string

	// tool (and user bash: name "bash", args {"command"})
	callID     string
	toolName   string
	args       json.RawMessage
	output     string
	details    json.RawMessage
	isError    bool
	done       bool
	durationMs *int64
	command    string // user bash

	// cache
	width    int
	expanded bool
	thinking bool
	lines    []string
	valid    bool
}

func (b *block) invalidate() { b.valid = false }

// render returns the block's lines at width (without the blank line that
// separates blocks).
func (b *block) render(width int, th *Theme, expanded, showThinking bool) []string {
	if b.valid && b.width == width && b.expanded == expanded && b.thinking == showThinking {
		return b.lines
	}
	b.width, b.expanded, b.thinking, b.valid = width, expanded, showThinking, true
	b.lines = b.draw(width, th, expanded, showThinking)
	return b.lines
}

func (b *block) draw(width int, th *Theme, expanded, showThinking bool) []string {
	switch b.kind {
	case kindUser:
		var out []string
		for _, l := range wrap(b.text, width-2) {
			pad := max(0, width-2-ansi.StringWidth(l))
			out = append(out, th.User.Render(" "+l+strings.Repeat(" ", pad)+" "))
		}
		return out
	case kindAssistant:
		return b.drawAssistant(width, th, showThinking)
	case kindTool:
		return b.drawTool(width, th, expanded)
	case kindBash:
		out := wrap(th.ToolHead.Render("$ "+b.command), width)
		out = append(out, b.outputLines(width, th, expanded)...)
		return out
	case kindError:
		return wrap(th.Error.Render(b.text), width)
	case kindWarning:
		return wrap(th.Warning.Render(b.text), width)
	case kindSummary:
		return append([]string{th.Accent.Render("Summary")}, renderMarkdown(b.text, width, th)...)
	default:
		return wrap(th.Dim.Render(b.text), width)
	}
}

func (b *block) drawAssistant(width int, th *Theme, showThinking bool) []string {
	var out []string
	for _, c := range b.content {
		switch c.Type {
		case ai.ContentThinking:
			if strings.TrimSpace(c.Thinking) == "" && !c.Redacted {
				continue
			}
			if len(out) > 0 {
				out = append(out, "")
			}
			if !showThinking || c.Redacted {
				out = append(out, th.Thinking.Render("Thinking..."))
				continue
			}
			for _, l := range wrap(c.Thinking, width) {
				out = append(out, th.Thinking.Render(l))
			}
		case ai.ContentText:
			if strings.TrimSpace(c.Text) == "" {
				continue
			}
			if len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, renderMarkdown(c.Text, width, th)...)
		}
	}
	switch b.stopReason {
	case "aborted":
		// The provider's wording ("Request was aborted") reads as pi's
		// interactive one; another reason (a stream rule) is kept.
		msg := b.errorMessage
		if msg == "" || msg == "Request was aborted" {
			msg = "Operation aborted"
		}
		out = append(out, th.Error.Render(msg))
	case "error":
		out = append(out, wrap(th.Error.Render("Error: "+b.errorMessage), width)...)
	}
	return out
}

// argString returns a string argument of the tool call.
func (b *block) argString(name string) string {
	var m map[string]any
	if json.Unmarshal(b.args, &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}

func (b *block) drawTool(width int, th *Theme, expanded bool) []string {
	var out []string
	head := func(s string) { out = append(out, wrap(th.ToolHead.Render(s), width)...) }
	switch b.toolName {
	case "bash":
		head("$ " + b.argString("command"))
		out = append(out, b.outputLines(width, th, expanded)...)
	case "edit":
		head("edit " + b.argString("path"))
		var d struct {
			Diff string `json:"diff"`
		}
		if b.done && !b.isError && json.Unmarshal(b.details, &d) == nil && d.Diff != "" {
			out = append(out, b.diffLines(d.Diff, width, th, expanded)...)
		} else {
			out = append(out, b.outputLines(width, th, expanded)...)
		}
	case "write":
		head("write " + b.argString("path"))
		content := b.argString("content")
		if b.isError {
			out = append(out, b.outputLines(width, th, expanded)...)
		} else if content != "" {
			var lines []string
			for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
				lines = append(lines, "+"+l)
			}
			out = append(out, b.diffLines(strings.Join(lines, "\n"), width, th, expanded)...)
		}
	case "read", "ls", "find", "grep":
		arg := b.argString("path")
		if p := b.argString("pattern"); p != "" {
			arg = p + " " + arg
		}
		head(b.toolName + " " + strings.TrimSpace(arg))
		out = append(out, b.outputLines(width, th, expanded)...)
	case "todo_write":
		head("todo")
		out = append(out, todoLines(b.args, width, th)...)
		if b.isError {
			out = append(out, b.outputLines(width, th, expanded)...)
		}
	case "task":
		desc := b.argString("description")
		if desc == "" {
			desc = b.argString("agent")
		}
		head("task " + desc)
		out = append(out, b.outputLines(width, th, expanded)...)
	default:
		args := string(b.args)
		if len(args) > 200 {
			args = args[:200] + "…"
		}
		head(b.toolName + " " + args)
		out = append(out, b.outputLines(width, th, expanded)...)
	}
	if b.done && b.durationMs != nil {
		out = append(out, th.Dim.Render(fmt.Sprintf("Took %.1fs", float64(*b.durationMs)/1000)))
	}
	return out
}

// outputLines is the tool's output, its last lines only while collapsed.
func (b *block) outputLines(width int, th *Theme, expanded bool) []string {
	text := strings.TrimRight(b.output, "\n")
	if text == "" {
		return nil
	}
	st := th.ToolOut
	if b.isError {
		st = th.Error
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.ReplaceAll(l, "\t", "    ")
		for _, w := range strings.Split(ansi.Hardwrap(ansi.Strip(l), width, true), "\n") {
			lines = append(lines, st.Render(w))
		}
	}
	if !expanded && len(lines) > collapsedLines {
		hidden := len(lines) - collapsedLines
		lines = append([]string{th.Dim.Render(fmt.Sprintf("… %d earlier lines (ctrl+o to expand)", hidden))}, lines[hidden:]...)
	}
	return lines
}

func (b *block) diffLines(diff string, width int, th *Theme, expanded bool) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		st := th.ToolOut
		switch {
		case strings.HasPrefix(l, "+"):
			st = th.Added
		case strings.HasPrefix(l, "-"):
			st = th.Removed
		}
		l = strings.ReplaceAll(l, "\t", "    ")
		for _, w := range strings.Split(ansi.Hardwrap(l, width, true), "\n") {
			lines = append(lines, st.Render(w))
		}
	}
	if !expanded && len(lines) > collapsedLines {
		hidden := len(lines) - collapsedLines
		lines = append(lines[:collapsedLines], th.Dim.Render(fmt.Sprintf("… %d more lines (ctrl+o to expand)", hidden)))
	}
	return lines
}

// todoLines renders the phases a todo_write call sets.
func todoLines(args json.RawMessage, width int, th *Theme) []string {
	var a struct {
		Phases []struct {
			Name  string `json:"name"`
			Tasks []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"tasks"`
		} `json:"phases"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	var out []string
	for _, p := range a.Phases {
		if p.Name != "" {
			out = append(out, th.Bold.Render(p.Name))
		}
		for _, t := range p.Tasks {
			mark, st := "☐ ", th.ToolOut
			switch t.Status {
			case "completed":
				mark, st = "☑ ", th.Success
			case "in_progress":
				mark, st = "▶ ", th.Accent
			case "abandoned":
				mark, st = "☒ ", th.Strike
			}
			out = append(out, wrap(st.Render(mark+t.Content), width)...)
		}
	}
	return out
}

// resultText is the text of a tool result's content blocks.
func resultText(cs []ai.Content) string {
	var parts []string
	for _, c := range cs {
		switch c.Type {
		case ai.ContentText:
			parts = append(parts, c.Text)
		case ai.ContentImage:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// blocksFromMessages rebuilds the transcript of a session's messages.
func blocksFromMessages(msgs []ai.Message) []*block {
	var out []*block
	tools := map[string]*block{}
	for _, m := range msgs {
		switch m := m.(type) {
		case *ai.UserMessage:
			out = append(out, &block{kind: kindUser, text: userText(m.Content)})
		case *ai.AssistantMessage:
			out = append(out, assistantBlocks(m, tools)...)
		case *ai.ToolResultMessage:
			b := tools[m.ToolCallID]
			if b == nil {
				b = &block{kind: kindTool, callID: m.ToolCallID, toolName: m.ToolName}
				out = append(out, b)
			}
			b.output, b.details, b.isError, b.done, b.durationMs = resultText(m.Content), m.Details, m.IsError, true, m.DurationMs
		case *ai.BashExecutionMessage:
			out = append(out, &block{kind: kindBash, command: m.Command, output: m.Output, done: true})
		case *ai.CustomMessage:
			if m.Display {
				out = append(out, &block{kind: kindInfo, text: m.Content.PlainText()})
			}
		case *ai.CompactionSummaryMessage:
			out = append(out, &block{kind: kindSummary, text: m.Summary})
		case *ai.BranchSummaryMessage:
			out = append(out, &block{kind: kindSummary, text: m.Summary})
		}
	}
	return out
}

// assistantBlocks is the assistant block of m followed by one block per
// tool call (registered in tools by call id).
func assistantBlocks(m *ai.AssistantMessage, tools map[string]*block) []*block {
	out := []*block{{kind: kindAssistant, content: m.Content, stopReason: m.StopReason, errorMessage: m.ErrorMessage}}
	for _, c := range m.Content {
		if c.Type == ai.ContentToolCall {
			b := &block{kind: kindTool, callID: c.ID, toolName: c.Name, args: c.Arguments}
			tools[c.ID] = b
			out = append(out, b)
		}
	}
	return out
}

func userText(c ai.UserContent) string {
	var parts []string
	images := 0
	for _, b := range c.AsBlocks() {
		switch b.Type {
		case ai.ContentText:
			parts = append(parts, b.Text)
		case ai.ContentImage:
			images++
		}
	}
	s := strings.Join(parts, "\n")
	if images > 0 {
		s += fmt.Sprintf(" [%d image(s)]", images)
	}
	return s
}
