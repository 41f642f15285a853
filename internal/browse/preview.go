package browse

import (
	"encoding/json"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// Preview lengths, in UTF-16 code units.
const (
	plainPreviewLen  = 140 // the plain view's preview
	browsePreviewLen = 200 // pi PR #1762's extractText
)

// textPrefix returns the first limit UTF-16 code units of the text blocks'
// texts joined by sep, without building the whole join.
func textPrefix(blocks []ai.Content, sep string, limit int) string {
	idx, n := -1, 0
	for i := range blocks {
		if blocks[i].Type == ai.ContentText {
			if n == 0 {
				idx = i
			}
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return jsSlice(blocks[idx].Text, limit)
	}
	texts := make([]string, 0, n)
	for i := range blocks {
		if blocks[i].Type == ai.ContentText {
			texts = append(texts, blocks[i].Text)
		}
	}
	return textsPrefix(texts, sep, limit)
}

// textsPrefix is textPrefix of texts.
func textsPrefix(texts []string, sep string, limit int) string {
	switch len(texts) {
	case 0:
		return ""
	case 1:
		return jsSlice(texts[0], limit)
	}
	var b strings.Builder
	units := 0
	first := true
	for _, text := range texts {
		if !first {
			s := jsSlice(sep, limit-units)
			b.WriteString(s)
			units += jsLen(s)
		}
		first = false
		if units >= limit {
			break
		}
		s := jsSlice(text, limit-units)
		b.WriteString(s)
		units += jsLen(s)
		if units >= limit {
			break
		}
	}
	return b.String()
}

// userContentPrefix is extractText for user-like content: a string is
// sliced, blocks are joined by sep.
func userContentPrefix(u ai.UserContent, limit int) string {
	if u.IsString {
		return jsSlice(u.Str, limit)
	}
	return textPrefix(u.Blocks, " ", limit)
}

// rawContentPrefix is extractText for a message known only as raw JSON:
// its "content" member, a string or blocks.
func rawContentPrefix(raw json.RawMessage, limit int) string {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil || len(m.Content) == 0 {
		return ""
	}
	if m.Content[0] == '"' {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			return ""
		}
		return jsSlice(s, limit)
	}
	if m.Content[0] != '[' {
		return ""
	}
	var blocks []json.RawMessage
	if json.Unmarshal(m.Content, &blocks) != nil {
		return ""
	}
	var texts []ai.Content
	for _, b := range blocks {
		var t struct {
			Type string           `json:"type"`
			Text *json.RawMessage `json:"text"`
		}
		if json.Unmarshal(b, &t) != nil || t.Type != ai.ContentText || t.Text == nil || len(*t.Text) == 0 || (*t.Text)[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal(*t.Text, &s) != nil {
			continue
		}
		texts = append(texts, ai.Text(s))
	}
	return textPrefix(texts, " ", limit)
}

// plainPreview is the plain view's preview of an entry: ok is false when
// the entry has no preview (the key is left out). p is scratch space for
// reading a message's texts without decoding it.
func plainPreview(e *session.Entry, p *session.TextPeek) (string, bool) {
	switch e.Type {
	case session.TypeMessage:
		if e.PeekText(p, plainPreviewLen, false) {
			switch e.Role() {
			case ai.RoleUser:
				if p.IsString {
					return jsSlice(p.Texts[0], plainPreviewLen), true
				}
				s := textsPrefix(p.Texts, " ", plainPreviewLen)
				return s, s != ""
			case ai.RoleAssistant:
				s := textsPrefix(p.Texts, " ", plainPreviewLen)
				return s, s != ""
			case ai.RoleToolResult:
				return toolResultPreview(p.ToolName), true
			}
		}
		return messagePreview(e.Message())
	case session.TypeCompaction:
		return "[compaction]", true
	case session.TypeBranchSummary:
		return "[branch_summary]", true
	case session.TypeCustomMessage:
		return "[custom_message]", true
	case session.TypeCustom:
		return "[custom]", true
	case session.TypeModelChange:
		return "[model:" + e.Provider + "/" + e.ModelID + "]", true
	case session.TypeThinkingLevelChange:
		return "[thinking:" + e.ThinkingLevel + "]", true
	case session.TypeLabel:
		l := ""
		if e.Label != nil {
			l = *e.Label
		}
		return "[label:" + l + "]", true
	case session.TypeSessionInfo:
		return "[session_info:" + e.Name + "]", true
	}
	return "", false
}

// messagePreview is the plain view's preview of a decoded message.
func messagePreview(m ai.Message) (string, bool) {
	switch m := m.(type) {
	case *ai.UserMessage:
		if m.Content.IsString {
			return jsSlice(m.Content.Str, plainPreviewLen), true
		}
		s := textPrefix(m.Content.Blocks, " ", plainPreviewLen)
		return s, s != ""
	case *ai.AssistantMessage:
		s := textPrefix(m.Content, " ", plainPreviewLen)
		return s, s != ""
	case *ai.ToolResultMessage:
		return toolResultPreview(m.ToolName), true
	}
	return "", false
}

func toolResultPreview(name string) string {
	if name == "" {
		name = "undefined" // `${undefined}`
	}
	return "[toolResult:" + name + "]"
}
