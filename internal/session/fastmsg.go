package session

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// decodeMessage decodes a message like ai.DecodeMessage. The common roles
// (user, assistant, toolResult) go through a direct decoder over the
// scanner, which is several times faster than encoding/json's reflection;
// whenever it meets anything it is not sure to decode exactly as
// ai.DecodeMessage would (an unusual type, null, a key that only differs in
// case from a known one), it gives up and ai.DecodeMessage does the work.
func decodeMessage(raw []byte) (ai.Message, error) {
	if m := fastDecode(raw); m != nil {
		return m, nil
	}
	return ai.DecodeMessage(raw)
}

var (
	userKeys       = []string{"role", "content", "timestamp"}
	assistantKeys  = []string{"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp", "responseId", "rawStopReason", "durationMs", "thinkingLevel", "providerThinkingLevel", "endTurn"}
	toolResultKeys = []string{"role", "toolCallId", "toolName", "content", "details", "usage", "isError", "durationMs", "nestedCalls", "timestamp"}
	usageKeys      = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
	costKeys       = []string{"input", "output", "cacheRead", "cacheWrite", "total"}
	textKeys       = []string{"type", "text", "textSignature"}
	thinkingKeys   = []string{"type", "thinking", "thinkingSignature", "redacted"}
	imageKeys      = []string{"type", "data", "mimeType"}
	toolCallKeys   = []string{"type", "id", "name", "arguments", "thoughtSignature", "argumentsError", "namespace"}
)

// extra returns the field for an unknown key, or ok=false when the key would
// match a known one case-insensitively (encoding/json does that).
func extraField(key string, val []byte, known []string) (jsonx.Field, bool) {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return jsonx.Field{}, false
		}
	}
	return jsonx.Field{Key: key, Value: json.RawMessage(val[:len(val):len(val)])}, true
}

func fastDecode(raw []byte) ai.Message {
	var buf [16]member
	ms, ok := members(buf[:0], raw)
	if !ok {
		return nil
	}
	role := ""
	for _, m := range ms {
		if m.key == "role" {
			role, ok = str(m.val)
			if !ok {
				return nil
			}
		}
	}
	switch role {
	case ai.RoleUser:
		if m, ok := fastUser(ms); ok {
			return m
		}
	case ai.RoleAssistant:
		if m, ok := fastAssistant(ms); ok {
			return m
		}
	case ai.RoleToolResult:
		if m, ok := fastToolResult(ms); ok {
			return m
		}
	}
	return nil
}

func fastUser(ms []member) (*ai.UserMessage, bool) {
	m := &ai.UserMessage{}
	for _, f := range ms {
		var ok bool
		switch f.key {
		case "role":
			m.Role, ok = str(f.val)
		case "content":
			m.Content, ok = fastUserContent(f.val)
		case "timestamp":
			m.Timestamp, ok = fastInt(f.val)
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, userKeys)
			m.Extra = append(m.Extra, x)
		}
		if !ok {
			return nil, false
		}
	}
	return m, true
}

func fastAssistant(ms []member) (*ai.AssistantMessage, bool) {
	m := &ai.AssistantMessage{}
	for _, f := range ms {
		var ok bool
		switch f.key {
		case "role":
			m.Role, ok = str(f.val)
		case "content":
			m.Content, ok = fastBlocks(f.val)
		case "api":
			m.API, ok = str(f.val)
		case "provider":
			m.Provider, ok = str(f.val)
		case "model":
			m.Model, ok = str(f.val)
		case "usage":
			m.Usage, ok = fastUsage(f.val)
		case "stopReason":
			m.StopReason, ok = str(f.val)
		case "errorMessage":
			m.ErrorMessage, ok = str(f.val)
		case "timestamp":
			m.Timestamp, ok = fastInt(f.val)
		case "responseId":
			m.ResponseID, ok = str(f.val)
		case "rawStopReason":
			m.RawStopReason, ok = str(f.val)
		case "durationMs":
			var n int64
			n, ok = fastInt(f.val)
			m.DurationMs = &n
		case "thinkingLevel":
			m.ThinkingLevel, ok = str(f.val)
		case "providerThinkingLevel":
			m.ProviderThinkingLevel, ok = str(f.val)
		case "endTurn":
			var b bool
			b, ok = boolVal(f.val)
			m.EndTurn = &b
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, assistantKeys)
			m.Extra = append(m.Extra, x)
		}
		if !ok {
			return nil, false
		}
	}
	return m, true
}

func fastToolResult(ms []member) (*ai.ToolResultMessage, bool) {
	m := &ai.ToolResultMessage{}
	for _, f := range ms {
		var ok bool
		switch f.key {
		case "role":
			m.Role, ok = str(f.val)
		case "toolCallId":
			m.ToolCallID, ok = str(f.val)
		case "toolName":
			m.ToolName, ok = str(f.val)
		case "content":
			m.Content, ok = fastBlocks(f.val)
		case "details":
			m.Details, ok = json.RawMessage(f.val[:len(f.val):len(f.val)]), true
		case "usage":
			var u ai.Usage
			u, ok = fastUsage(f.val)
			m.Usage = &u
		case "isError":
			m.IsError, ok = boolVal(f.val)
		case "durationMs":
			var n int64
			n, ok = fastInt(f.val)
			m.DurationMs = &n
		case "nestedCalls":
			m.NestedCalls, ok = json.RawMessage(f.val[:len(f.val):len(f.val)]), true
		case "timestamp":
			m.Timestamp, ok = fastInt(f.val)
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, toolResultKeys)
			m.Extra = append(m.Extra, x)
		}
		if !ok {
			return nil, false
		}
	}
	return m, true
}

func fastUsage(v []byte) (ai.Usage, bool) {
	var u ai.Usage
	var buf [8]member
	ms, ok := members(buf[:0], v)
	if !ok {
		return u, false
	}
	for _, f := range ms {
		switch f.key {
		case "input":
			u.Input, ok = fastInt(f.val)
		case "output":
			u.Output, ok = fastInt(f.val)
		case "cacheRead":
			u.CacheRead, ok = fastInt(f.val)
		case "cacheWrite":
			u.CacheWrite, ok = fastInt(f.val)
		case "totalTokens":
			u.TotalTokens, ok = fastInt(f.val)
		case "cost":
			u.Cost, ok = fastCost(f.val)
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, usageKeys)
			u.Extra = append(u.Extra, x)
		}
		if !ok {
			return u, false
		}
	}
	return u, true
}

func fastCost(v []byte) (ai.Cost, bool) {
	var c ai.Cost
	var buf [8]member
	ms, ok := members(buf[:0], v)
	if !ok {
		return c, false
	}
	for _, f := range ms {
		switch f.key {
		case "input":
			c.Input, ok = fastFloat(f.val)
		case "output":
			c.Output, ok = fastFloat(f.val)
		case "cacheRead":
			c.CacheRead, ok = fastFloat(f.val)
		case "cacheWrite":
			c.CacheWrite, ok = fastFloat(f.val)
		case "total":
			c.Total, ok = fastFloat(f.val)
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, costKeys)
			c.Extra = append(c.Extra, x)
		}
		if !ok {
			return c, false
		}
	}
	return c, true
}

func fastUserContent(v []byte) (ai.UserContent, bool) {
	if len(v) > 0 && v[0] == '"' {
		s, ok := unquote(v)
		return ai.UserContent{IsString: true, Str: s}, ok
	}
	blocks, ok := fastBlocks(v)
	return ai.UserContent{Blocks: blocks}, ok
}

func fastBlocks(v []byte) ([]ai.Content, bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var ebuf [8][]byte
	els, ok := elements(ebuf[:0], v)
	if !ok {
		return nil, false
	}
	out := make([]ai.Content, len(els))
	for i, el := range els {
		if !fastBlock(&out[i], el) {
			return nil, false
		}
	}
	return out, true
}

func fastBlock(c *ai.Content, v []byte) bool {
	var buf [8]member
	ms, ok := members(buf[:0], v)
	if !ok {
		return false
	}
	for _, f := range ms {
		if f.key == "type" {
			if c.Type, ok = str(f.val); !ok {
				return false
			}
		}
	}
	var known []string
	switch c.Type {
	case ai.ContentText:
		known = textKeys
	case ai.ContentThinking:
		known = thinkingKeys
	case ai.ContentImage:
		known = imageKeys
	case ai.ContentToolCall:
		known = toolCallKeys
	default:
		return false
	}
	for _, f := range ms {
		ok = true
		switch {
		case f.key == "type":
		case f.key == "text" && c.Type == ai.ContentText:
			c.Text, ok = str(f.val)
		case f.key == "textSignature" && c.Type == ai.ContentText:
			c.TextSignature, ok = str(f.val)
		case f.key == "thinking" && c.Type == ai.ContentThinking:
			c.Thinking, ok = str(f.val)
		case f.key == "thinkingSignature" && c.Type == ai.ContentThinking:
			c.ThinkingSignature, ok = str(f.val)
		case f.key == "redacted" && c.Type == ai.ContentThinking:
			c.Redacted, ok = boolVal(f.val)
		case f.key == "data" && c.Type == ai.ContentImage:
			c.Data, ok = str(f.val)
		case f.key == "mimeType" && c.Type == ai.ContentImage:
			c.MimeType, ok = str(f.val)
		case c.Type == ai.ContentToolCall && f.key == "id":
			c.ID, ok = str(f.val)
		case c.Type == ai.ContentToolCall && f.key == "name":
			c.Name, ok = str(f.val)
		case c.Type == ai.ContentToolCall && f.key == "arguments":
			c.Arguments = json.RawMessage(f.val[:len(f.val):len(f.val)])
		case c.Type == ai.ContentToolCall && f.key == "thoughtSignature":
			c.ThoughtSignature, ok = str(f.val)
		case c.Type == ai.ContentToolCall && f.key == "argumentsError":
			c.ArgumentsError, ok = str(f.val)
		case c.Type == ai.ContentToolCall && f.key == "namespace":
			c.Namespace, ok = str(f.val)
		default:
			var x jsonx.Field
			x, ok = extraField(f.key, f.val, known)
			c.Extra = append(c.Extra, x)
		}
		if !ok {
			return false
		}
	}
	return true
}

// fastInt parses a JSON integer the way encoding/json fills an int64.
func fastInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		if len(v) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil
	}
	neg := false
	i := 0
	if v[0] == '-' {
		neg = true
		i = 1
		if len(v) == 1 {
			return 0, false
		}
	}
	var n int64
	for ; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func fastFloat(v []byte) (float64, bool) {
	if len(v) == 0 || (v[0] != '-' && !isDigit(v[0])) {
		return 0, false
	}
	if n, ok := fastInt(v); ok && n > -(1<<53) && n < 1<<53 {
		return float64(n), true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}
