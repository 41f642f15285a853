package session

import "unicode/utf8"

// TextPeek is what Entry.PeekText reads of a message without decoding it.
type TextPeek struct {
	// Texts are the texts of the content's text blocks, in order (a
	// user message's string content is its one text), each cut to a
	// prefix of at least the requested length.
	Texts    []string
	IsString bool   // the content is a string
	ToolName string // a tool result's toolName
}

// PeekText reads the texts of a user or assistant message's content, or a
// tool result's tool name, straight from the entry's line: a look at many
// messages (the preview of every node of a tree) costs neither decoding
// nor memory. Each text is cut to a prefix that holds at least units
// UTF-16 code units, or is the whole text. ok is false when the message
// has to be decoded for that (it was not read verbatim, or has another
// role); p is reused.
func (e *Entry) PeekText(p *TextPeek, units int) (ok bool) {
	b := e.verbatim()
	if b == nil {
		return false
	}
	p.Texts, p.IsString, p.ToolName = p.Texts[:0], false, ""
	limit := 6*units + 24 // bytes of JSON that hold at least units code units
	switch e.role {
	case roleUser:
		i := len(`{"role":"user","content":`)
		if b[i] == '"' {
			p.IsString = true
			p.Texts = append(p.Texts, stringPrefix(b, i, limit))
			return true
		}
		p.Texts = textBlocks(p.Texts, b, i, limit)
		return true
	case roleAssistant:
		p.Texts = textBlocks(p.Texts, b, len(`{"role":"assistant","content":`), limit)
		return true
	case roleToolResult:
		i := len(`{"role":"toolResult","toolCallId":`)
		i = skipStringTrusted(b, i) + len(`,"toolName":`)
		p.ToolName = stringPrefix(b, i, len(b))
		return true
	}
	return false
}

// textBlocks appends the texts of the text blocks of the verbatim content
// array at b[i].
func textBlocks(dst []string, b []byte, i, limit int) []string {
	i++ // [
	for b[i] != ']' {
		if b[i] == ',' {
			i++
		}
		const text = `{"type":"text","text":`
		if len(b)-i > len(text) && string(b[i:i+len(text)]) == text {
			dst = append(dst, stringPrefix(b, i+len(text), limit))
		}
		i = skipTrusted(b, i)
	}
	return dst
}

// stringPrefix decodes the verbatim JSON string at b[i], or, when its
// inside is longer than limit bytes, a prefix of it that ends on a
// character boundary at most limit bytes in (and at least limit-12).
func stringPrefix(b []byte, i, limit int) string {
	e := skipStringTrusted(b, i)
	inner := b[i+1 : e-1]
	if len(inner) > limit {
		cut, k := 0, 0
		for k < limit {
			cut = k
			switch c := inner[k]; {
			case c == '\\' && inner[k+1] == 'u':
				k += 6
			case c == '\\':
				k += 2
			case c < utf8.RuneSelf:
				k++
			default:
				_, n := utf8.DecodeRune(inner[k:])
				k += n
			}
		}
		if k == limit {
			cut = k
		}
		inner = inner[:cut]
	}
	s, _ := unquoteInner(inner)
	return s
}
