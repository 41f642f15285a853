package acp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/ai"
)

// toolDesc is how a tool call is shown in the editor.
type toolDesc struct {
	title     string
	kind      sdk.ToolKind
	locations []sdk.ToolCallLocation
}

// describeTool names a tool call: its title, kind and the paths it
// touches (absolute, against the session's cwd).
func describeTool(name string, args json.RawMessage, cwd string) toolDesc {
	var a struct {
		Path    string `json:"path"`
		Command string `json:"command"`
		Pattern string `json:"pattern"`
		Offset  *int   `json:"offset"`
	}
	_ = json.Unmarshal(args, &a)
	abs := func(p string) string {
		if p == "" {
			p = "."
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	loc := func(p string, line *int) []sdk.ToolCallLocation {
		return []sdk.ToolCallLocation{{Path: abs(p), Line: line}}
	}
	switch name {
	case "bash":
		t := oneLine(a.Command, 120)
		if t == "" {
			t = "bash"
		}
		return toolDesc{title: t, kind: sdk.ToolKindExecute}
	case "read":
		return toolDesc{title: "Read " + a.Path, kind: sdk.ToolKindRead, locations: loc(a.Path, a.Offset)}
	case "edit":
		return toolDesc{title: "Edit " + a.Path, kind: sdk.ToolKindEdit, locations: loc(a.Path, nil)}
	case "write":
		return toolDesc{title: "Write " + a.Path, kind: sdk.ToolKindEdit, locations: loc(a.Path, nil)}
	case "grep":
		return toolDesc{title: "grep " + oneLine(a.Pattern, 100), kind: sdk.ToolKindSearch, locations: loc(a.Path, nil)}
	case "find":
		return toolDesc{title: "find " + oneLine(a.Pattern, 100), kind: sdk.ToolKindSearch, locations: loc(a.Path, nil)}
	case "ls":
		return toolDesc{title: "ls " + a.Path, kind: sdk.ToolKindRead, locations: loc(a.Path, nil)}
	case "todo_write":
		return toolDesc{title: "Update the plan", kind: sdk.ToolKindThink}
	case "task":
		return toolDesc{title: "Task", kind: sdk.ToolKindThink}
	case "web_fetch", "fetch":
		return toolDesc{title: name, kind: sdk.ToolKindFetch}
	}
	return toolDesc{title: name, kind: sdk.ToolKindOther}
}

// start is the tool_call announcing a call.
func (d toolDesc) start(id string, status sdk.ToolCallStatus, args json.RawMessage, content []sdk.ToolCallContent) sdk.SessionUpdate {
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(d.kind), sdk.WithStartStatus(status)}
	if len(d.locations) > 0 {
		opts = append(opts, func(tc *sdk.SessionUpdateToolCall) { tc.Locations = d.locations })
	}
	if raw := rawJSON(args); raw != nil {
		opts = append(opts, sdk.WithStartRawInput(raw))
	}
	if len(content) > 0 {
		opts = append(opts, sdk.WithStartContent(content))
	}
	return sdk.StartToolCall(sdk.ToolCallId(id), d.title, opts...)
}

// toolContent is a tool result as tool-call content: its diffs, then its
// text (images as image blocks).
func toolContent(content []ai.Content, diffs []sdk.ToolCallContent) []sdk.ToolCallContent {
	out := append([]sdk.ToolCallContent{}, diffs...)
	if txt := textOf(content); txt != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(txt)))
	}
	for _, c := range content {
		if c.Type == ai.ContentImage && c.Data != "" {
			out = append(out, sdk.ToolContent(sdk.ImageBlock(c.Data, c.MimeType)))
		}
	}
	return out
}

// finalUpdate ends a tool call: completed or failed, with its output.
func finalUpdate(id string, content []ai.Content, isError bool, diffs []sdk.ToolCallContent) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if isError {
		status = sdk.ToolCallStatusFailed
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if c := toolContent(content, diffs); len(c) > 0 {
		opts = append(opts, sdk.WithUpdateContent(c))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(id), opts...)
}

// textOf joins the text blocks of content.
func textOf(content []ai.Content) string {
	var b strings.Builder
	for _, c := range content {
		if c.Type == ai.ContentText && c.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// planOf reads the plan of a todo_write result's details.
func planOf(details json.RawMessage) (sdk.SessionUpdate, bool) {
	var d struct {
		Phases []struct {
			Name  string `json:"name"`
			Tasks []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"tasks"`
		} `json:"phases"`
	}
	if json.Unmarshal(details, &d) != nil {
		return sdk.SessionUpdate{}, false
	}
	entries := []sdk.PlanEntry{}
	for _, p := range d.Phases {
		for _, t := range p.Tasks {
			var st sdk.PlanEntryStatus
			switch t.Status {
			case "pending":
				st = sdk.PlanEntryStatusPending
			case "in_progress":
				st = sdk.PlanEntryStatusInProgress
			case "completed":
				st = sdk.PlanEntryStatusCompleted
			default:
				continue // abandoned
			}
			entries = append(entries, sdk.PlanEntry{Content: t.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
		}
	}
	return sdk.UpdatePlan(entries...), true
}

// promptInput turns a prompt's content blocks into the text and images of
// a user message: text as is, a resource link as its URI, an embedded
// text resource as its text in a <file> block, images as images.
func promptInput(blocks []sdk.ContentBlock) (string, []ai.Content, error) {
	var parts []string
	var images []ai.Content
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Image != nil:
			switch {
			case b.Image.Data != "":
				images = append(images, ai.Image(b.Image.Data, b.Image.MimeType))
			case b.Image.Uri != nil && *b.Image.Uri != "":
				images = append(images, ai.ImageURL(*b.Image.Uri))
			default:
				return "", nil, invalidParams("prompt[%d]: an image needs data or a uri", i)
			}
		case b.ResourceLink != nil:
			parts = append(parts, "@"+uriPath(b.ResourceLink.Uri))
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				parts = append(parts, fmt.Sprintf("<file name=%q>\n%s\n</file>", uriPath(r.TextResourceContents.Uri), r.TextResourceContents.Text))
			case r.BlobResourceContents != nil:
				parts = append(parts, "@"+uriPath(r.BlobResourceContents.Uri))
			}
		case b.Audio != nil:
			return "", nil, invalidParams("prompt[%d]: audio is not supported (promptCapabilities.audio is false)", i)
		default:
			return "", nil, invalidParams("prompt[%d]: unknown content block", i)
		}
	}
	return strings.Join(parts, "\n"), images, nil
}

// uriPath is the path of a file: URI, else the URI itself.
func uriPath(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return uri
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// replay sends the session's current branch (after a compaction: its
// summary, then the kept entries) as updates, each tool call with its
// final status.
func (as *acpSession) replay() {
	msgs := as.core.Messages()
	results := map[string]*ai.ToolResultMessage{}
	for _, m := range msgs {
		if r, ok := m.(*ai.ToolResultMessage); ok {
			results[r.ToolCallID] = r
		}
	}
	cwd := as.core.Cwd()
	for _, m := range msgs {
		switch m := m.(type) {
		case *ai.UserMessage:
			for _, c := range m.Content.AsBlocks() {
				switch {
				case c.Type == ai.ContentText && c.Text != "":
					as.send(sdk.UpdateUserMessageText(c.Text))
				case c.Type == ai.ContentImage && c.Data != "":
					as.send(sdk.UpdateUserMessage(sdk.ImageBlock(c.Data, c.MimeType)))
				}
			}
		case *ai.AssistantMessage:
			for _, c := range m.Content {
				switch c.Type {
				case ai.ContentThinking:
					if c.Thinking != "" {
						as.send(sdk.UpdateAgentThoughtText(c.Thinking))
					}
				case ai.ContentText:
					if c.Text != "" {
						as.send(sdk.UpdateAgentMessageText(c.Text))
					}
				case ai.ContentToolCall:
					d := describeTool(c.Name, c.Arguments, cwd)
					status := sdk.ToolCallStatusFailed // no result: it never finished
					var content []sdk.ToolCallContent
					if r := results[c.ID]; r != nil {
						status = sdk.ToolCallStatusCompleted
						if r.IsError {
							status = sdk.ToolCallStatusFailed
						}
						content = toolContent(r.Content, nil)
					}
					as.send(d.start(c.ID, status, c.Arguments, content))
				}
			}
			if m.StopReason == ai.StopError && m.ErrorMessage != "" {
				as.send(sdk.UpdateAgentMessageText("\n\nError: " + m.ErrorMessage))
			}
		case *ai.BashExecutionMessage:
			status := sdk.ToolCallStatusCompleted
			if m.Cancelled || (m.ExitCode != nil && *m.ExitCode != 0) {
				status = sdk.ToolCallStatusFailed
			}
			var content []sdk.ToolCallContent
			if m.Output != "" {
				content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(m.Output))}
			}
			id := fmt.Sprintf("bash-%d", m.Timestamp)
			as.send(toolDesc{title: oneLine(m.Command, 120), kind: sdk.ToolKindExecute}.start(id, status, nil, content))
		case *ai.CompactionSummaryMessage:
			as.send(sdk.UpdateAgentMessageText(m.Summary))
		case *ai.BranchSummaryMessage:
			as.send(sdk.UpdateAgentMessageText(m.Summary))
		case *ai.CustomMessage:
			if m.Display {
				if txt := textOf(m.Content.AsBlocks()); txt != "" {
					as.send(sdk.UpdateAgentMessageText(txt))
				}
			}
		}
	}
}

// Config option ids.
const (
	optModel   = "model"
	optThought = "thought_level"
)

func modelValue(m *ai.Model) string { return m.Provider + "/" + m.ID }

// configOptions are the session's model and thought level choices.
func (as *acpSession) configOptions() []sdk.SessionConfigOption {
	cur := as.core.Model()
	var opts []sdk.SessionConfigOption
	models := sdk.SessionConfigSelectOptionsUngrouped{}
	for _, m := range as.srv.sortedModels(cur) {
		name := m.Name
		if name == "" {
			name = m.ID
		}
		models = append(models, sdk.SessionConfigSelectOption{Name: name, Value: sdk.SessionConfigValueId(modelValue(m)), Description: sdk.Ptr(m.Provider)})
	}
	curModel := ""
	if cur != nil {
		curModel = modelValue(cur)
	}
	if len(models) > 0 {
		opts = append(opts, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
			Id: optModel, Name: "Model", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel),
			CurrentValue: sdk.SessionConfigValueId(curModel),
			Options:      sdk.SessionConfigSelectOptions{Ungrouped: &models},
		}})
	}
	levels := sdk.SessionConfigSelectOptionsUngrouped{}
	for _, l := range as.core.AvailableThinkingLevels() {
		levels = append(levels, sdk.SessionConfigSelectOption{Name: l, Value: sdk.SessionConfigValueId(l)})
	}
	level := as.core.ThinkingLevel()
	if level == "" {
		level = "off"
	}
	opts = append(opts, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: optThought, Name: "Thinking", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryThoughtLevel),
		CurrentValue: sdk.SessionConfigValueId(level),
		Options:      sdk.SessionConfigSelectOptions{Ungrouped: &levels},
	}})
	return opts
}

// setOption is session/set_config_option: an unknown option or value is
// an error and changes nothing.
func (as *acpSession) setOption(id, value string) error {
	switch id {
	case optModel:
		for _, m := range as.srv.sortedModels(as.core.Model()) {
			if modelValue(m) == value {
				if _, err := as.core.SetModel(m.Provider, m.ID); err != nil {
					return invalidParams("%v", err)
				}
				return nil
			}
		}
		return invalidParams("unknown model %q", value)
	case optThought:
		for _, l := range as.core.AvailableThinkingLevels() {
			if l == value {
				_, err := as.core.SetThinkingLevel(value)
				return err
			}
		}
		return invalidParams("thought_level %q is not one of %s for this model", value, strings.Join(as.core.AvailableThinkingLevels(), ", "))
	}
	return invalidParams("unknown config option %q (known: %s, %s)", id, optModel, optThought)
}

func (as *acpSession) modeState() *sdk.SessionModeState {
	as.mu.Lock()
	mode := as.mode
	as.mu.Unlock()
	return &sdk.SessionModeState{
		CurrentModeId: sdk.SessionModeId(mode),
		AvailableModes: []sdk.SessionMode{
			{Id: ModeAsk, Name: "Ask", Description: sdk.Ptr("Ask before edit, write and bash")},
			{Id: ModeAuto, Name: "Auto", Description: sdk.Ptr("Run every tool without asking")},
		},
	}
}

func (as *acpSession) setMode(mode string) error {
	if mode != ModeAsk && mode != ModeAuto {
		return invalidParams("unknown modeId %q (known: %s, %s)", mode, ModeAsk, ModeAuto)
	}
	as.mu.Lock()
	as.mode = mode
	as.mu.Unlock()
	return nil
}
