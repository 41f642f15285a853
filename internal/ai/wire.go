package ai

import (
	"sync/atomic"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Hand-written encoders of the types on the streaming hot path (usage,
// cost, content blocks, the assistant message and the assistant events).
// They append exactly the bytes jsonx.Marshal gives for the struct tags
// (key order, omitempty) of the reflective encoders they replace, which stay
// as the fallback: a value the fast encoders cannot write (a NaN, invalid
// raw JSON) goes through the reflective path, so errors read as before.
// TestFastEncodersMatchReflective compares both on random values.

// reflectOnly makes the MarshalJSON methods use the reflective encoders
// (tests: the reference the fast encoders are compared with).
var reflectOnly atomic.Bool

// AppendJSON appends the cost as MarshalJSON writes it.
func (c Cost) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"input":`...)
	if dst, err = jsonx.AppendFloat(dst, c.Input); err != nil {
		return dst, err
	}
	dst = append(dst, `,"output":`...)
	if dst, err = jsonx.AppendFloat(dst, c.Output); err != nil {
		return dst, err
	}
	dst = append(dst, `,"cacheRead":`...)
	if dst, err = jsonx.AppendFloat(dst, c.CacheRead); err != nil {
		return dst, err
	}
	dst = append(dst, `,"cacheWrite":`...)
	if dst, err = jsonx.AppendFloat(dst, c.CacheWrite); err != nil {
		return dst, err
	}
	dst = append(dst, `,"total":`...)
	if dst, err = jsonx.AppendFloat(dst, c.Total); err != nil {
		return dst, err
	}
	if dst, err = jsonx.AppendExtra(dst, c.Extra, false); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the usage as MarshalJSON writes it.
func (u Usage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"input":`...)
	dst = jsonx.AppendInt(dst, u.Input)
	dst = append(dst, `,"output":`...)
	dst = jsonx.AppendInt(dst, u.Output)
	dst = append(dst, `,"cacheRead":`...)
	dst = jsonx.AppendInt(dst, u.CacheRead)
	dst = append(dst, `,"cacheWrite":`...)
	dst = jsonx.AppendInt(dst, u.CacheWrite)
	dst = append(dst, `,"totalTokens":`...)
	dst = jsonx.AppendInt(dst, u.TotalTokens)
	dst = append(dst, `,"cost":`...)
	var err error
	if dst, err = u.Cost.AppendJSON(dst); err != nil {
		return dst, err
	}
	if dst, err = jsonx.AppendExtra(dst, u.Extra, false); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the block as MarshalJSON writes it.
func (c Content) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"type":`...)
	dst = jsonx.AppendString(dst, c.Type)
	switch c.Type {
	case ContentText:
		dst = append(dst, `,"text":`...)
		dst = jsonx.AppendString(dst, c.Text)
		if c.TextSignature != "" {
			dst = append(dst, `,"textSignature":`...)
			dst = jsonx.AppendString(dst, c.TextSignature)
		}
	case ContentThinking:
		dst = append(dst, `,"thinking":`...)
		dst = jsonx.AppendString(dst, c.Thinking)
		if c.ThinkingSignature != "" {
			dst = append(dst, `,"thinkingSignature":`...)
			dst = jsonx.AppendString(dst, c.ThinkingSignature)
		}
		if c.Redacted {
			dst = append(dst, `,"redacted":true`...)
		}
	case ContentImage:
		if c.URL == "" || c.Data != "" {
			dst = append(dst, `,"data":`...)
			dst = jsonx.AppendString(dst, c.Data)
		}
		if c.URL == "" || c.MimeType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = jsonx.AppendString(dst, c.MimeType)
		}
		if c.URL != "" {
			dst = append(dst, `,"url":`...)
			dst = jsonx.AppendString(dst, c.URL)
		}
	case ContentToolCall:
		dst = append(dst, `,"id":`...)
		dst = jsonx.AppendString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonx.AppendString(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		if len(c.Arguments) == 0 {
			dst = append(dst, "{}"...)
		} else if dst, err = jsonx.AppendRaw(dst, c.Arguments); err != nil {
			return dst, err
		}
		if c.ThoughtSignature != "" {
			dst = append(dst, `,"thoughtSignature":`...)
			dst = jsonx.AppendString(dst, c.ThoughtSignature)
		}
		if c.ArgumentsError != "" {
			dst = append(dst, `,"argumentsError":`...)
			dst = jsonx.AppendString(dst, c.ArgumentsError)
		}
		if c.Namespace != "" {
			dst = append(dst, `,"namespace":`...)
			dst = jsonx.AppendString(dst, c.Namespace)
		}
	}
	if dst, err = jsonx.AppendExtra(dst, c.Extra, false); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendContentList appends blocks as a JSON array (nil as null, like
// encoding/json; callers that want [] pass a non-nil slice).
func appendContentList(dst []byte, blocks []Content) ([]byte, error) {
	if blocks == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	var err error
	for i := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = blocks[i].AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m AssistantMessage) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"role":"assistant","content":`...)
	content := m.Content
	if content == nil {
		content = []Content{}
	}
	if dst, err = appendContentList(dst, content); err != nil {
		return dst, err
	}
	dst = append(dst, `,"api":`...)
	dst = jsonx.AppendString(dst, m.API)
	dst = append(dst, `,"provider":`...)
	dst = jsonx.AppendString(dst, m.Provider)
	dst = append(dst, `,"model":`...)
	dst = jsonx.AppendString(dst, m.Model)
	dst = append(dst, `,"usage":`...)
	if dst, err = m.Usage.AppendJSON(dst); err != nil {
		return dst, err
	}
	dst = append(dst, `,"stopReason":`...)
	dst = jsonx.AppendString(dst, m.StopReason)
	if m.ErrorMessage != "" {
		dst = append(dst, `,"errorMessage":`...)
		dst = jsonx.AppendString(dst, m.ErrorMessage)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	if m.ResponseID != "" {
		dst = append(dst, `,"responseId":`...)
		dst = jsonx.AppendString(dst, m.ResponseID)
	}
	if m.RawStopReason != "" {
		dst = append(dst, `,"rawStopReason":`...)
		dst = jsonx.AppendString(dst, m.RawStopReason)
	}
	if m.DurationMs != nil {
		dst = append(dst, `,"durationMs":`...)
		dst = jsonx.AppendInt(dst, *m.DurationMs)
	}
	if m.ThinkingLevel != "" {
		dst = append(dst, `,"thinkingLevel":`...)
		dst = jsonx.AppendString(dst, m.ThinkingLevel)
	}
	if m.ProviderThinkingLevel != "" {
		dst = append(dst, `,"providerThinkingLevel":`...)
		dst = jsonx.AppendString(dst, m.ProviderThinkingLevel)
	}
	if m.EndTurn != nil {
		dst = append(dst, `,"endTurn":`...)
		dst = jsonx.AppendBool(dst, *m.EndTurn)
	}
	if dst, err = jsonx.AppendExtra(dst, m.Extra, false); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendAssistantPtr appends a *AssistantMessage member (nil is null).
func appendAssistantPtr(dst []byte, m *AssistantMessage) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	return m.AppendJSON(dst)
}

// AppendWireJSON appends what WireJSON(partial) returns.
func (e AssistantEvent) AppendWireJSON(dst []byte, partial *AssistantMessage) ([]byte, error) {
	var err error
	dst = append(dst, `{"type":`...)
	dst = jsonx.AppendString(dst, e.Type)
	switch e.Type {
	case EvStart:
	case EvTextStart, EvThinkingStart:
		dst = appendContentIndex(dst, e.ContentIndex)
	case EvToolCallStart:
		dst = appendContentIndex(dst, e.ContentIndex)
		dst = append(dst, `,"id":`...)
		dst = jsonx.AppendString(dst, e.ID)
		dst = append(dst, `,"toolName":`...)
		dst = jsonx.AppendString(dst, e.ToolName)
	case EvTextDelta, EvThinkingDelta, EvToolCallDelta:
		dst = appendContentIndex(dst, e.ContentIndex)
		dst = append(dst, `,"delta":`...)
		dst = jsonx.AppendString(dst, e.Delta)
	case EvTextEnd, EvThinkingEnd:
		dst = appendContentIndex(dst, e.ContentIndex)
		dst = append(dst, `,"content":`...)
		dst = jsonx.AppendString(dst, e.Content)
	case EvToolCallEnd:
		dst = appendContentIndex(dst, e.ContentIndex)
		dst = append(dst, `,"toolCall":`...)
		if e.ToolCall == nil {
			dst = append(dst, "null"...)
		} else if dst, err = e.ToolCall.AppendJSON(dst); err != nil {
			return dst, err
		}
	case EvDone:
		dst = append(dst, `,"reason":`...)
		dst = jsonx.AppendString(dst, e.Reason)
		dst = append(dst, `,"message":`...)
		if dst, err = appendAssistantPtr(dst, e.Message); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	default:
		dst = append(dst, `,"reason":`...)
		dst = jsonx.AppendString(dst, e.Reason)
		dst = append(dst, `,"error":`...)
		if dst, err = appendAssistantPtr(dst, e.Message); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	if partial != nil {
		dst = append(dst, `,"partial":`...)
		if dst, err = partial.AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendContentIndex(dst []byte, i int) []byte {
	dst = append(dst, `,"contentIndex":`...)
	return jsonx.AppendInt(dst, int64(i))
}

// fast reports whether the MarshalJSON methods use the fast encoders.
func fast() bool { return !reflectOnly.Load() }

// appendJSON appends the list element by element: messages with a fast
// encoder directly, the others through jsonx.Marshal (which gives the bytes
// encoding/json would give for them inside the list).
func (ms Messages) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		if a, ok := m.(*AssistantMessage); ok && a != nil {
			var err error
			if dst, err = a.AppendJSON(dst); err != nil {
				return dst, err
			}
			continue
		}
		b, err := jsonx.Marshal(m)
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
	}
	return append(dst, ']'), nil
}

// AppendMessage appends m as encoding/json (jsonx.Marshal) writes it as a
// Message member of a larger value: nil as null, an assistant message with
// its fast encoder, any other message as jsonx.Marshal writes it. An error
// means the caller should take its reflective path (which gives the error
// text).
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	if a, ok := m.(*AssistantMessage); ok && a != nil {
		return a.AppendJSON(dst)
	}
	b, err := jsonx.Marshal(m)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// AppendMessages appends ms as Messages.MarshalJSON writes it (nil as []).
func AppendMessages(dst []byte, ms Messages) ([]byte, error) {
	if ms == nil {
		return append(dst, "[]"...), nil
	}
	return ms.appendJSON(dst)
}
