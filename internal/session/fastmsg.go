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
	c := &cur{b: raw}
	if m := fastDecode(c); m != nil {
		c.ws()
		if c.i == len(raw) {
			return m, nil
		}
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

// cur is a validating cursor over JSON: values are checked and decoded
// where they are, so each byte is looked at about once.
type cur struct {
	b   []byte
	i   int
	bad bool
	ar  *arena // optional: allocate decoded values in chunks
}

// arena hands out messages and content blocks from larger chunks, which
// cuts the allocations of a big load several times. Nothing is ever freed
// individually: a chunk lives as long as anything points into it.
type arena struct {
	users    []ai.UserMessage
	assts    []ai.AssistantMessage
	results  []ai.ToolResultMessage
	blocks   []ai.Content
	scratch  []ai.Content
	chunkLen int
}

func (a *arena) user() *ai.UserMessage {
	if a == nil {
		return &ai.UserMessage{}
	}
	if len(a.users) == cap(a.users) {
		a.users = make([]ai.UserMessage, 0, a.chunkLen)
	}
	a.users = a.users[:len(a.users)+1]
	return &a.users[len(a.users)-1]
}

func (a *arena) assistant() *ai.AssistantMessage {
	if a == nil {
		return &ai.AssistantMessage{}
	}
	if len(a.assts) == cap(a.assts) {
		a.assts = make([]ai.AssistantMessage, 0, a.chunkLen)
	}
	a.assts = a.assts[:len(a.assts)+1]
	return &a.assts[len(a.assts)-1]
}

func (a *arena) toolResult() *ai.ToolResultMessage {
	if a == nil {
		return &ai.ToolResultMessage{}
	}
	if len(a.results) == cap(a.results) {
		a.results = make([]ai.ToolResultMessage, 0, a.chunkLen)
	}
	a.results = a.results[:len(a.results)+1]
	return &a.results[len(a.results)-1]
}

// content copies blocks into the current chunk (capacity exactly len).
func (a *arena) content(blocks []ai.Content) []ai.Content {
	n := len(blocks)
	if a == nil || n > a.chunkLen {
		return append(make([]ai.Content, 0, n), blocks...)
	}
	if cap(a.blocks)-len(a.blocks) < n {
		a.blocks = make([]ai.Content, 0, a.chunkLen)
	}
	start := len(a.blocks)
	a.blocks = append(a.blocks, blocks...)
	return a.blocks[start : start+n : start+n]
}

func (c *cur) ws() {
	for c.i < len(c.b) && isWS(c.b[c.i]) {
		c.i++
	}
}

func (c *cur) open(ch byte) bool {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	c.bad = true
	return false
}

// next reports whether another member or element follows (consuming the
// comma); false at the closing bracket, which it consumes.
func (c *cur) next(close byte, first *bool) bool {
	c.ws()
	if c.i >= len(c.b) {
		c.bad = true
		return false
	}
	if c.b[c.i] == close {
		c.i++
		return false
	}
	if !*first {
		if c.b[c.i] != ',' {
			c.bad = true
			return false
		}
		c.i++
		c.ws()
	}
	*first = false
	return true
}

// key reads a member key and its colon.
func (c *cur) key() string {
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		c.bad = true
		return ""
	}
	s := c.i
	e, plain := scanString(c.b, c.i)
	if e < 0 {
		c.bad = true
		return ""
	}
	c.i = e
	var k string
	if plain {
		k = alias(c.b[s+1 : e-1])
	} else {
		var ok bool
		if k, ok = unquote(c.b[s:e]); !ok {
			c.bad = true
		}
	}
	c.ws()
	if c.i >= len(c.b) || c.b[c.i] != ':' {
		c.bad = true
		return ""
	}
	c.i++
	c.ws()
	return k
}

// raw returns the next value, validated.
func (c *cur) raw() []byte {
	s := c.i
	e := skipValue(c.b, c.i, 1)
	if e < 0 {
		c.bad = true
		return nil
	}
	c.i = e
	return c.b[s:e:e]
}

func (c *cur) str() string {
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		c.bad = true
		return ""
	}
	s := c.i
	e, plain := scanString(c.b, c.i)
	if e < 0 {
		c.bad = true
		return ""
	}
	c.i = e
	if plain {
		return alias(c.b[s+1 : e-1])
	}
	v, ok := unquote(c.b[s:e])
	if !ok {
		c.bad = true
	}
	return v
}

func (c *cur) int() int64 {
	n, ok := fastInt(c.raw())
	if !ok {
		c.bad = true
	}
	return n
}

func (c *cur) float() float64 {
	f, ok := fastFloat(c.raw())
	if !ok {
		c.bad = true
	}
	return f
}

func (c *cur) boolean() bool {
	b, ok := boolVal(c.raw())
	if !ok {
		c.bad = true
	}
	return b
}

func (c *cur) extra(ex *jsonx.Extra, key string, known []string) {
	v := c.raw()
	f, ok := extraField(key, v, known)
	if !ok {
		c.bad = true
		return
	}
	*ex = append(*ex, f)
}

// fastDecode decodes user, assistant and toolResult messages whose first
// key is "role" (as pi writes them); nil means "use ai.DecodeMessage".
func fastDecode(c *cur) ai.Message {
	if !c.open('{') {
		return nil
	}
	first := true
	if !c.next('}', &first) || c.key() != "role" {
		return nil
	}
	role := c.str()
	if c.bad {
		return nil
	}
	var m ai.Message
	switch role {
	case ai.RoleUser:
		m = fastUser(c, &first)
	case ai.RoleAssistant:
		m = fastAssistant(c, &first)
	case ai.RoleToolResult:
		m = fastToolResult(c, &first)
	default:
		return nil
	}
	if c.bad {
		return nil
	}
	return m
}

func fastUser(c *cur, first *bool) *ai.UserMessage {
	m := c.ar.user()
	m.Role = ai.RoleUser
	for !c.bad && c.next('}', first) {
		switch k := c.key(); k {
		case "role":
			m.Role = c.str()
		case "content":
			m.Content = fastUserContent(c)
		case "timestamp":
			m.Timestamp = c.int()
		default:
			c.extra(&m.Extra, k, userKeys)
		}
	}
	return m
}

func fastAssistant(c *cur, first *bool) *ai.AssistantMessage {
	m := c.ar.assistant()
	m.Role = ai.RoleAssistant
	for !c.bad && c.next('}', first) {
		switch k := c.key(); k {
		case "role":
			m.Role = c.str()
		case "content":
			m.Content = fastBlocks(c)
		case "api":
			m.API = c.str()
		case "provider":
			m.Provider = c.str()
		case "model":
			m.Model = c.str()
		case "usage":
			m.Usage = fastUsage(c)
		case "stopReason":
			m.StopReason = c.str()
		case "errorMessage":
			m.ErrorMessage = c.str()
		case "timestamp":
			m.Timestamp = c.int()
		case "responseId":
			m.ResponseID = c.str()
		case "rawStopReason":
			m.RawStopReason = c.str()
		case "durationMs":
			n := c.int()
			m.DurationMs = &n
		case "thinkingLevel":
			m.ThinkingLevel = c.str()
		case "providerThinkingLevel":
			m.ProviderThinkingLevel = c.str()
		case "endTurn":
			b := c.boolean()
			m.EndTurn = &b
		default:
			c.extra(&m.Extra, k, assistantKeys)
		}
	}
	return m
}

func fastToolResult(c *cur, first *bool) *ai.ToolResultMessage {
	m := c.ar.toolResult()
	m.Role = ai.RoleToolResult
	for !c.bad && c.next('}', first) {
		switch k := c.key(); k {
		case "role":
			m.Role = c.str()
		case "toolCallId":
			m.ToolCallID = c.str()
		case "toolName":
			m.ToolName = c.str()
		case "content":
			m.Content = fastBlocks(c)
		case "details":
			m.Details = json.RawMessage(c.raw())
		case "usage":
			u := fastUsage(c)
			m.Usage = &u
		case "isError":
			m.IsError = c.boolean()
		case "durationMs":
			n := c.int()
			m.DurationMs = &n
		case "nestedCalls":
			m.NestedCalls = json.RawMessage(c.raw())
		case "timestamp":
			m.Timestamp = c.int()
		default:
			c.extra(&m.Extra, k, toolResultKeys)
		}
	}
	return m
}

func fastUsage(c *cur) ai.Usage {
	var u ai.Usage
	if !c.open('{') {
		return u
	}
	first := true
	for !c.bad && c.next('}', &first) {
		switch k := c.key(); k {
		case "input":
			u.Input = c.int()
		case "output":
			u.Output = c.int()
		case "cacheRead":
			u.CacheRead = c.int()
		case "cacheWrite":
			u.CacheWrite = c.int()
		case "totalTokens":
			u.TotalTokens = c.int()
		case "cost":
			u.Cost = fastCost(c)
		default:
			c.extra(&u.Extra, k, usageKeys)
		}
	}
	return u
}

func fastCost(c *cur) ai.Cost {
	var x ai.Cost
	if !c.open('{') {
		return x
	}
	first := true
	for !c.bad && c.next('}', &first) {
		switch k := c.key(); k {
		case "input":
			x.Input = c.float()
		case "output":
			x.Output = c.float()
		case "cacheRead":
			x.CacheRead = c.float()
		case "cacheWrite":
			x.CacheWrite = c.float()
		case "total":
			x.Total = c.float()
		default:
			c.extra(&x.Extra, k, costKeys)
		}
	}
	return x
}

func fastUserContent(c *cur) ai.UserContent {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '"' {
		return ai.UserContent{IsString: true, Str: c.str()}
	}
	return ai.UserContent{Blocks: fastBlocks(c)}
}

func fastBlocks(c *cur) []ai.Content {
	if !c.open('[') {
		return nil
	}
	var scratch []ai.Content
	if c.ar != nil {
		scratch = c.ar.scratch[:0]
	}
	first := true
	for !c.bad && c.next(']', &first) {
		scratch = append(scratch, ai.Content{})
		fastBlock(c, &scratch[len(scratch)-1])
	}
	out := c.ar.content(scratch)
	if c.ar != nil {
		clear(scratch)
		c.ar.scratch = scratch[:0]
	}
	return out
}

func fastBlock(c *cur, b *ai.Content) {
	if !c.open('{') {
		return
	}
	first := true
	if !c.next('}', &first) || c.key() != "type" {
		c.bad = true
		return
	}
	b.Type = c.str()
	var known []string
	switch b.Type {
	case ai.ContentText:
		known = textKeys
	case ai.ContentThinking:
		known = thinkingKeys
	case ai.ContentImage:
		known = imageKeys
	case ai.ContentToolCall:
		known = toolCallKeys
	default:
		c.bad = true
		return
	}
	for !c.bad && c.next('}', &first) {
		k := c.key()
		switch {
		case k == "type":
			b.Type = c.str()
			if b.Type != known[0] && b.Type != "" {
				c.bad = true // a second, different type: leave it to encoding/json
			}
		case b.Type == ai.ContentText && k == "text":
			b.Text = c.str()
		case b.Type == ai.ContentText && k == "textSignature":
			b.TextSignature = c.str()
		case b.Type == ai.ContentThinking && k == "thinking":
			b.Thinking = c.str()
		case b.Type == ai.ContentThinking && k == "thinkingSignature":
			b.ThinkingSignature = c.str()
		case b.Type == ai.ContentThinking && k == "redacted":
			b.Redacted = c.boolean()
		case b.Type == ai.ContentImage && k == "data":
			b.Data = c.str()
		case b.Type == ai.ContentImage && k == "mimeType":
			b.MimeType = c.str()
		case b.Type == ai.ContentToolCall && k == "id":
			b.ID = c.str()
		case b.Type == ai.ContentToolCall && k == "name":
			b.Name = c.str()
		case b.Type == ai.ContentToolCall && k == "arguments":
			b.Arguments = json.RawMessage(c.raw())
		case b.Type == ai.ContentToolCall && k == "thoughtSignature":
			b.ThoughtSignature = c.str()
		case b.Type == ai.ContentToolCall && k == "argumentsError":
			b.ArgumentsError = c.str()
		case b.Type == ai.ContentToolCall && k == "namespace":
			b.Namespace = c.str()
		default:
			c.extra(&b.Extra, k, known)
		}
	}
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
