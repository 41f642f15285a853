package session

import "unicode/utf8"

// TextPeek is what Entry.PeekText reads of a message without decoding it.
type TextPeek struct {
	// Texts are the texts of the content's text blocks, in order (a
	// user message's string content is its one text), each cut to a
	// prefix of at least the requested length.
	Texts    []string
	IsString bool // the content is a string

	// assistant
	Calls        []PeekCall // the toolCall blocks, in order
	StopReason   string
	ErrorMessage string

	// toolResult
	ToolCallID string
	ToolName   string
}

// PeekCall is a toolCall block read by PeekText.
type PeekCall struct {
	ID, Name  string
	Arguments []byte // the raw JSON, as in ai.Content
}

// PeekText reads what a tree shows of a user, assistant or toolResult
// message (the texts of its content, an assistant's tool calls and, with
// tail, its stop reason and error, a tool result's call id and tool name)
// straight from the entry's line: a look at many messages (a node for
// every entry of a tree) costs neither decoding nor memory. Each text is
// cut to a prefix that holds at least units UTF-16 code units, or is the
// whole text. ok is false when the message has to be decoded for that (it
// was not read verbatim, or has another role). p is reused; the strings it
// is given stay valid.
func (e *Entry) PeekText(p *TextPeek, units int, tail bool) (ok bool) {
	b := e.verbatim()
	if b == nil {
		return false
	}
	*p = TextPeek{Texts: p.Texts[:0], Calls: p.Calls[:0]}
	limit := 6*units + 24 // bytes of JSON that hold at least units code units
	switch e.role {
	case roleUser:
		i := len(`{"role":"user","content":`)
		if b[i] == '"' {
			p.IsString = true
			p.Texts = append(p.Texts, stringPrefix(b, i, limit))
			return true
		}
		p.blocks(b, i, limit)
		return true
	case roleAssistant:
		// content, api, provider, model, usage, stopReason, errorMessage?
		i := p.blocks(b, len(`{"role":"assistant","content":`), limit)
		if !tail {
			return true
		}
		if e.stopBack > 0 {
			i = len(b) - int(e.stopBack)
		} else {
			for k := 0; k < 4; k++ {
				i = skipMember(b, i)
			}
			i += len(`,"stopReason":`)
		}
		p.StopReason = stringPrefix(b, i, len(b))
		i = skipStringTrusted(b, i)
		const em = `,"errorMessage":`
		if len(b)-i > len(em) && string(b[i:i+len(em)]) == em {
			p.ErrorMessage = stringPrefix(b, i+len(em), len(b))
		}
		return true
	case roleToolResult:
		i := len(`{"role":"toolResult","toolCallId":`)
		p.ToolCallID = stringPrefix(b, i, len(b))
		i = skipStringTrusted(b, i) + len(`,"toolName":`)
		p.ToolName = stringPrefix(b, i, len(b))
		return true
	}
	return false
}

// skipMember returns the end of the member that starts with the comma at
// b[i] of a verbatim object.
func skipMember(b []byte, i int) int {
	i = skipStringTrusted(b, i+1) + 1 // ,"key":
	return skipTrusted(b, i)
}

// blocks reads the text and toolCall blocks of the verbatim content array
// at b[i] and returns where the array ends.
func (p *TextPeek) blocks(b []byte, i, limit int) int {
	i++ // [
	for b[i] != ']' {
		if b[i] == ',' {
			i++
		}
		const text = `{"type":"text","text":`
		const call = `{"type":"toolCall","id":`
		switch {
		case len(b)-i > len(text) && string(b[i:i+len(text)]) == text:
			p.Texts = append(p.Texts, stringPrefix(b, i+len(text), limit))
		case len(b)-i > len(call) && string(b[i:i+len(call)]) == call:
			// id, name, arguments (always, in this order)
			k := i + len(call)
			var c PeekCall
			c.ID = stringPrefix(b, k, len(b))
			k = skipStringTrusted(b, k) + len(`,"name":`)
			c.Name = stringPrefix(b, k, len(b))
			k = skipStringTrusted(b, k) + len(`,"arguments":`)
			c.Arguments = b[k:skipTrusted(b, k):skipTrusted(b, k)]
			p.Calls = append(p.Calls, c)
		}
		i = skipTrusted(b, i)
	}
	return i + 1
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
