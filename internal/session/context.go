package session

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Context is what the model sees on the active branch, with the settings
// in force there.
type Context struct {
	Messages      []ai.Message
	EntryIDs      []string // parallel to Messages: the entry each came from ("" for the compaction summary and its system checkpoint)
	ThinkingLevel string   // "off" when the path has no thinking_level_change
	Provider      string   // "" when the path names no model
	ModelID       string
}

// BuildContext builds the context of the current leaf (pi's
// buildSessionContext plus pi 1.5's context_edit entries and compaction
// system checkpoints).
func (s *Session) BuildContext() Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contextLocked(s.leaf)
}

// ContextAt builds the context as if the leaf were id (the last entry when
// id is unknown, as pi does).
func (s *Session) ContextAt(id string) Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(id)
	if e == nil && len(s.entries) > 0 {
		e = s.entries[len(s.entries)-1]
	}
	return s.contextLocked(e)
}

// ContextInfo is what BuildContext reports besides the messages.
type ContextInfo struct {
	MessageCount  int    // len(BuildContext().Messages)
	ThinkingLevel string // as Context
	Provider      string
	ModelID       string
}

// Info reports the current leaf's context without building its messages
// (get_state and session_changed need only the count).
func (s *Session) Info() ContextInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.infoLocked(s.leaf)
}

// HasEntryType reports whether any entry (on any branch) has type typ.
func (s *Session) HasEntryType(typ string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// isoToMs converts an entry timestamp to Unix milliseconds (0 if invalid).
func isoToMs(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

func (s *Session) contextLocked(leaf *Entry) Context {
	ctx := Context{ThinkingLevel: "off"}
	s.walkContext(leaf, &ctx, nil)
	return ctx
}

func (s *Session) infoLocked(leaf *Entry) ContextInfo {
	ctx := Context{ThinkingLevel: "off"}
	n := 0
	s.walkContext(leaf, &ctx, &n)
	return ContextInfo{MessageCount: n, ThinkingLevel: ctx.ThinkingLevel, Provider: ctx.Provider, ModelID: ctx.ModelID}
}

// walkContext fills ctx for leaf; with count != nil it only counts the
// messages into *count and leaves ctx.Messages and ctx.EntryIDs empty.
func (s *Session) walkContext(leaf *Entry, ctx *Context, count *int) {
	if leaf == nil {
		return
	}
	path := s.branchLocked(leaf)

	var compaction *Entry
	compactionIdx := -1
	var edits map[string]*Entry
	for i, e := range path {
		switch e.Type {
		case TypeThinkingLevelChange:
			ctx.ThinkingLevel = e.ThinkingLevel
		case TypeModelChange:
			ctx.Provider, ctx.ModelID = e.Provider, e.ModelID
		case TypeMessage:
			if am, ok := e.Message.(*ai.AssistantMessage); ok {
				ctx.Provider, ctx.ModelID = am.Provider, am.Model
			}
		case TypeCompaction:
			compaction, compactionIdx = e, i
		case TypeContextEdit:
			if edits == nil {
				edits = map[string]*Entry{}
			}
			edits[e.TargetID] = e
		}
	}

	if count == nil {
		n := len(path)
		ctx.Messages = make([]ai.Message, 0, n+1)
		ctx.EntryIDs = make([]string, 0, n+1)
	}
	add := func(e *Entry, dropSystem bool) {
		var m ai.Message
		switch e.Type {
		case TypeMessage:
			m = e.Message
			if m == nil || (dropSystem && m.MessageRole() == ai.RoleSystem) {
				return
			}
		case TypeCustomMessage:
			if count != nil {
				break
			}
			m = &ai.CustomMessage{Role: ai.RoleCustom, CustomType: e.CustomType, Content: e.Content, Display: e.Display, Details: e.Details, Timestamp: isoToMs(e.Timestamp)}
		case TypeBranchSummary:
			if e.Summary == "" {
				return
			}
			if count != nil {
				break
			}
			var from *string
			if !e.fromIDNull {
				f := e.FromID
				from = &f
			}
			m = &ai.BranchSummaryMessage{Role: ai.RoleBranchSummary, Summary: e.Summary, FromID: from, Timestamp: isoToMs(e.Timestamp)}
		default:
			return
		}
		if ed := edits[e.ID]; ed != nil {
			if ed.Replacement == nil {
				return
			}
			if count == nil {
				m = replaceContent(m, ed.Replacement)
			}
		}
		if count != nil {
			*count++
			return
		}
		ctx.Messages = append(ctx.Messages, m)
		ctx.EntryIDs = append(ctx.EntryIDs, e.ID)
	}

	if compaction == nil {
		for _, e := range path {
			add(e, false)
		}
		return
	}
	checkpoint := compaction.SystemMessage != nil
	switch {
	case count != nil && checkpoint:
		*count += 2
	case count != nil:
		*count++
	default:
		if checkpoint {
			sm := *compaction.SystemMessage
			ctx.Messages = append(ctx.Messages, &sm)
			ctx.EntryIDs = append(ctx.EntryIDs, "")
		}
		ctx.Messages = append(ctx.Messages, &ai.CompactionSummaryMessage{Role: ai.RoleCompactionSummary, Summary: compaction.Summary, TokensBefore: compaction.TokensBefore, Timestamp: isoToMs(compaction.Timestamp)})
		ctx.EntryIDs = append(ctx.EntryIDs, "")
	}
	found := false
	for _, e := range path[:compactionIdx] {
		if e.ID == compaction.FirstKeptEntryID {
			found = true
		}
		if found {
			add(e, checkpoint)
		}
	}
	for _, e := range path[compactionIdx+1:] {
		add(e, false)
	}
}

// replaceContent returns a copy of m with the content of a context_edit
// replacement ({"content": ...}); m itself when it has no content to
// replace.
func replaceContent(m ai.Message, replacement json.RawMessage) ai.Message {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(replacement, &r) != nil || len(r.Content) == 0 {
		return m
	}
	var uc ai.UserContent
	if json.Unmarshal(r.Content, &uc) != nil {
		return m
	}
	switch v := m.(type) {
	case *ai.UserMessage:
		c := *v
		c.Content = uc
		return &c
	case *ai.CustomMessage:
		c := *v
		c.Content = uc
		return &c
	case *ai.AssistantMessage:
		c := *v
		c.Content = uc.AsBlocks()
		return &c
	case *ai.ToolResultMessage:
		c := *v
		c.Content = uc.AsBlocks()
		return &c
	}
	return m
}

// The texts pi wraps around summaries when they are sent to a model.
const (
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
)

// BashExecutionText is pi's text for a bash execution sent to a model.
func BashExecutionText(m *ai.BashExecutionMessage) string {
	text := "Ran `" + m.Command + "`\n"
	if m.Output != "" {
		text += "```\n" + m.Output + "\n```"
	} else {
		text += "(no output)"
	}
	if m.Cancelled {
		text += "\n\n(command cancelled)"
	} else if m.ExitCode != nil && *m.ExitCode != 0 {
		text += "\n\nCommand exited with code " + strconv.Itoa(*m.ExitCode)
	}
	if m.Truncated && m.FullOutputPath != "" {
		text += "\n\n[Output truncated. Full output: " + m.FullOutputPath + "]"
	}
	return text
}

// ConvertToLLM turns context messages into the messages a model receives
// (pi's convertToLlm): bashExecution, custom, branchSummary and
// compactionSummary become user messages; user, assistant and toolResult
// are kept; system messages (they become the system prompt elsewhere) and
// unknown roles are dropped.
func ConvertToLLM(msgs []ai.Message) []ai.Message {
	out := make([]ai.Message, 0, len(msgs))
	for _, m := range msgs {
		switch v := m.(type) {
		case *ai.UserMessage, *ai.AssistantMessage, *ai.ToolResultMessage:
			out = append(out, m)
		case *ai.BashExecutionMessage:
			if v.ExcludeFromContext {
				continue
			}
			out = append(out, userText(BashExecutionText(v), v.Timestamp))
		case *ai.CustomMessage:
			content := v.Content
			if content.IsString {
				content = ai.BlockContent(ai.Text(content.Str))
			}
			out = append(out, &ai.UserMessage{Role: ai.RoleUser, Content: content, Timestamp: v.Timestamp})
		case *ai.BranchSummaryMessage:
			out = append(out, userText(BranchSummaryPrefix+v.Summary+BranchSummarySuffix, v.Timestamp))
		case *ai.CompactionSummaryMessage:
			out = append(out, userText(CompactionSummaryPrefix+v.Summary+CompactionSummarySuffix, v.Timestamp))
		}
	}
	return out
}

func userText(text string, ts int64) *ai.UserMessage {
	return &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(text)), Timestamp: ts}
}
