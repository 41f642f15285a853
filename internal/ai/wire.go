package ai

import (
	"errors"
	"sync/atomic"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Hand-written encoders of every message type and of the types on the
// streaming hot path (usage, cost, content blocks, the assistant events).
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

// appendJSON appends the list element by element with AppendMessage.
func (ms Messages) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = AppendMessage(dst, m); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendMessage appends m as encoding/json (jsonx.Marshal) writes it as a
// Message member of a larger value: nil (and a nil pointer) as null, every
// message type of this package with its hand-written encoder. When that
// encoder fails (a NaN, invalid raw JSON), m goes through jsonx.Marshal,
// whose error is returned (callers take their reflective path with it).
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	n := len(dst)
	out, err := appendMessageFast(dst, m)
	if err == nil {
		return out, nil
	}
	b, err := jsonx.Marshal(m)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

// appendMessageFast appends m with the hand-written encoders only.
func appendMessageFast(dst []byte, m Message) ([]byte, error) {
	switch v := m.(type) {
	case nil:
		return append(dst, "null"...), nil
	case *AssistantMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *UserMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *ToolResultMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *SystemMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *BashExecutionMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *CustomMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *BranchSummaryMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *CompactionSummaryMessage:
		if v != nil {
			return v.AppendJSON(dst)
		}
	case *UnknownMessage:
		if v != nil {
			return jsonx.AppendRaw(dst, v.Raw)
		}
	default:
		return dst, errNoFastEncoder
	}
	return append(dst, "null"...), nil // a nil pointer
}

var errNoFastEncoder = errors.New("ai: no hand-written encoder")

// AppendMessages appends ms as Messages.MarshalJSON writes it (nil as []).
func AppendMessages(dst []byte, ms Messages) ([]byte, error) {
	if ms == nil {
		return append(dst, "[]"...), nil
	}
	return ms.appendJSON(dst)
}

// AppendJSON appends the content as MarshalJSON writes it.
func (u UserContent) AppendJSON(dst []byte) ([]byte, error) {
	if u.IsString {
		return jsonx.AppendString(dst, u.Str), nil
	}
	if u.Blocks == nil {
		return append(dst, "[]"...), nil
	}
	return appendContentList(dst, u.Blocks)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m UserMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"user","content":`...)
	dst, err := m.Content.AppendJSON(dst)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m ToolResultMessage) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"role":"toolResult","toolCallId":`...)
	dst = jsonx.AppendString(dst, m.ToolCallID)
	dst = append(dst, `,"toolName":`...)
	dst = jsonx.AppendString(dst, m.ToolName)
	dst = append(dst, `,"content":`...)
	content := m.Content
	if content == nil {
		content = []Content{}
	}
	if dst, err = appendContentList(dst, content); err != nil {
		return dst, err
	}
	if len(m.Details) > 0 {
		dst = append(dst, `,"details":`...)
		if dst, err = jsonx.AppendRaw(dst, m.Details); err != nil {
			return dst, err
		}
	}
	if m.Usage != nil {
		dst = append(dst, `,"usage":`...)
		if dst, err = m.Usage.AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"isError":`...)
	dst = jsonx.AppendBool(dst, m.IsError)
	if m.DurationMs != nil {
		dst = append(dst, `,"durationMs":`...)
		dst = jsonx.AppendInt(dst, *m.DurationMs)
	}
	if len(m.NestedCalls) > 0 {
		dst = append(dst, `,"nestedCalls":`...)
		if dst, err = jsonx.AppendRaw(dst, m.NestedCalls); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m SystemMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"system","content":`...)
	dst, err := m.Content.AppendJSON(dst)
	if err != nil {
		return dst, err
	}
	if len(m.Sections) > 0 {
		dst = append(dst, `,"sections":`...)
		if dst, err = jsonx.AppendRaw(dst, m.Sections); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	if len(m.ToolsAdded) > 0 {
		dst = append(dst, `,"toolsAdded":[`...)
		for i := range m.ToolsAdded {
			t := &m.ToolsAdded[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = jsonx.AppendString(dst, t.Name)
			dst = append(dst, `,"description":`...)
			dst = jsonx.AppendString(dst, t.Description)
			dst = append(dst, `,"parameters":`...)
			if dst, err = jsonx.AppendRawMessage(dst, t.Parameters); err != nil {
				return dst, err
			}
			if t.ConstrainedSampling != nil {
				dst = append(dst, `,"constrainedSampling":`...)
				dst = jsonx.AppendBool(dst, *t.ConstrainedSampling)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(m.ToolsRemoved) > 0 {
		dst = append(dst, `,"toolsRemoved":[`...)
		for i := range m.ToolsRemoved {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = jsonx.AppendString(dst, m.ToolsRemoved[i].Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m BashExecutionMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"bashExecution","command":`...)
	dst = jsonx.AppendString(dst, m.Command)
	dst = append(dst, `,"output":`...)
	dst = jsonx.AppendString(dst, m.Output)
	if m.ExitCode != nil {
		dst = append(dst, `,"exitCode":`...)
		dst = jsonx.AppendInt(dst, int64(*m.ExitCode))
	}
	dst = append(dst, `,"cancelled":`...)
	dst = jsonx.AppendBool(dst, m.Cancelled)
	dst = append(dst, `,"truncated":`...)
	dst = jsonx.AppendBool(dst, m.Truncated)
	if m.FullOutputPath != "" {
		dst = append(dst, `,"fullOutputPath":`...)
		dst = jsonx.AppendString(dst, m.FullOutputPath)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	if m.ExcludeFromContext {
		dst = append(dst, `,"excludeFromContext":true`...)
	}
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m CustomMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"custom","customType":`...)
	dst = jsonx.AppendString(dst, m.CustomType)
	dst = append(dst, `,"content":`...)
	dst, err := m.Content.AppendJSON(dst)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"display":`...)
	dst = jsonx.AppendBool(dst, m.Display)
	if len(m.Details) > 0 {
		dst = append(dst, `,"details":`...)
		if dst, err = jsonx.AppendRaw(dst, m.Details); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m BranchSummaryMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"branchSummary","summary":`...)
	dst = jsonx.AppendString(dst, m.Summary)
	dst = append(dst, `,"fromId":`...)
	if m.FromID == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonx.AppendString(dst, *m.FromID)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	return appendExtraClose(dst, m.Extra)
}

// AppendJSON appends the message as MarshalJSON writes it.
func (m CompactionSummaryMessage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"role":"compactionSummary","summary":`...)
	dst = jsonx.AppendString(dst, m.Summary)
	dst = append(dst, `,"tokensBefore":`...)
	dst = jsonx.AppendInt(dst, m.TokensBefore)
	dst = append(dst, `,"timestamp":`...)
	dst = jsonx.AppendInt(dst, m.Timestamp)
	return appendExtraClose(dst, m.Extra)
}

// appendExtraClose appends the unknown members and the closing brace of
// an object that already has members.
func appendExtraClose(dst []byte, extra jsonx.Extra) ([]byte, error) {
	dst, err := jsonx.AppendExtra(dst, extra, false)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}
