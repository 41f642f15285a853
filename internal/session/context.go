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
	if leaf == nil {
		return ctx
	}
	path := s.branchLocked(leaf)
	items := make([]ctxItem, 0, len(path)+2)
	s.walkContext(path, &ctx, false, func(e *Entry, m ai.Message) {
		items = append(items, ctxItem{e, m})
	})
	// Messages not decoded yet are decoded together (in chunks, and on
	// every core for a long context).
	var todo []*Entry
	for _, it := range items {
		if it.m == nil && it.e.msg.Load() == nil {
			todo = append(todo, it.e)
		}
	}
	decodeEntries(todo)
	ctx.Messages = make([]ai.Message, len(items))
	ctx.EntryIDs = make([]string, len(items))
	for i, it := range items {
		if it.m != nil {
			ctx.Messages[i] = it.m
		} else {
			ctx.Messages[i] = it.e.Message()
		}
		if it.e != nil {
			ctx.EntryIDs[i] = it.e.ID
		}
	}
	return ctx
}

func (s *Session) infoLocked(leaf *Entry) ContextInfo {
	ctx := Context{ThinkingLevel: "off"}
	n := 0
	if leaf != nil {
		s.walkContext(s.branchLocked(leaf), &ctx, true, func(*Entry, ai.Message) { n++ })
	}
	return ContextInfo{MessageCount: n, ThinkingLevel: ctx.ThinkingLevel, Provider: ctx.Provider, ModelID: ctx.ModelID}
}

// ctxItem is one message of a context: m, or (m nil) the message of e. e
// is the entry the message comes from (nil for the compaction summary and
// its system checkpoint).
type ctxItem struct {
	e *Entry
	m ai.Message
}

// walkContext fills ctx's settings for the leaf whose branch is path and
// calls visit with each message of its context, in order: (e, nil) for the message of a message
// entry, (e or nil, m) for a message made from an entry (custom_message,
// branch_summary, compaction) or one whose content a context_edit
// replaced. With counting, only the number of calls matters: visit gets
// (e, nil) for those too, and no message is made or decoded.
func (s *Session) walkContext(path []*Entry, ctx *Context, counting bool, visit func(e *Entry, m ai.Message)) {
	var compaction *Entry
	compactionIdx := -1
	var model *Entry // the last model_change or assistant message
	var edits map[string]*Entry
	for i, e := range path {
		switch e.Type {
		case TypeThinkingLevelChange:
			ctx.ThinkingLevel = e.ThinkingLevel
		case TypeModelChange:
			model = e
		case TypeMessage:
			if e.role == roleAssistant {
				model = e
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
	if model != nil {
		if model.Type == TypeModelChange {
			ctx.Provider, ctx.ModelID = model.Provider, model.ModelID
		} else if am, ok := model.Message().(*ai.AssistantMessage); ok && am != nil {
			ctx.Provider, ctx.ModelID = am.Provider, am.Model
		}
	}

	add := func(e *Entry, dropSystem bool) {
		var m ai.Message // nil: e's own message
		switch e.Type {
		case TypeMessage:
			if !e.hasMessage() || (dropSystem && e.Role() == ai.RoleSystem) {
				return
			}
		case TypeCustomMessage:
			if counting {
				break
			}
			m = &ai.CustomMessage{Role: ai.RoleCustom, CustomType: e.CustomType, Content: e.Content, Display: e.Display, Details: e.Details, Timestamp: isoToMs(e.Timestamp)}
		case TypeBranchSummary:
			if e.Summary == "" {
				return
			}
			if counting {
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
			if !counting {
				if m == nil {
					m = e.Message()
				}
				m = replaceContent(m, ed.Replacement)
			}
		}
		visit(e, m)
	}

	if compaction == nil {
		for _, e := range path {
			add(e, false)
		}
		return
	}
	checkpoint := compaction.SystemMessage != nil
	if checkpoint {
		if counting {
			visit(nil, nil)
		} else {
			sm := *compaction.SystemMessage
			visit(nil, &sm)
		}
	}
	if counting {
		visit(nil, nil)
	} else {
		visit(nil, &ai.CompactionSummaryMessage{Role: ai.RoleCompactionSummary, Summary: compaction.Summary, TokensBefore: compaction.TokensBefore, Timestamp: isoToMs(compaction.Timestamp)})
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
