package session

import (
	"encoding/binary"
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
	imageKeys      = []string{"type", "data", "mimeType", "url"}
	toolCallKeys   = []string{"type", "id", "name", "arguments", "thoughtSignature", "argumentsError", "namespace"}

	userSet       = newKeySet(userKeys)
	assistantSet  = newKeySet(assistantKeys)
	toolResultSet = newKeySet(toolResultKeys)
	usageSet      = newKeySet(usageKeys)
	costSet       = newKeySet(costKeys)
	textSet       = newKeySet(textKeys)
	thinkingSet   = newKeySet(thinkingKeys)
	imageSet      = newKeySet(imageKeys)
	toolCallSet   = newKeySet(toolCallKeys)
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
	b     []byte
	i     int
	bad   bool
	sawWS bool   // whitespace was skipped somewhere
	ar    *arena // optional: allocate decoded values in chunks
}

// arena hands out messages and content blocks from larger chunks, which
// cuts the allocations of a big load several times. Nothing is ever freed
// individually: a chunk lives as long as anything points into it.
type arena struct {
	users    []ai.UserMessage
	assts    []ai.AssistantMessage
	results  []ai.ToolResultMessage
	blocks   []ai.Content
	ints     []int64
	boxes    []msgBox
	chunkLen int
}

// presize starts the arena's chunks with room for the given numbers of
// values, in memory advised to use huge pages when they are big (a batch
// decode of many messages knows their roles in advance).
func (a *arena) presize(users, assts, results, blocks, ints, boxes int) {
	a.users = hugeSlice[ai.UserMessage](users, false)[:0]
	a.assts = hugeSlice[ai.AssistantMessage](assts, false)[:0]
	a.results = hugeSlice[ai.ToolResultMessage](results, false)[:0]
	a.blocks = hugeSlice[ai.Content](blocks, false)[:0]
	a.ints = hugeSlice[int64](ints, false)[:0]
	a.boxes = hugeSlice[msgBox](boxes, false)[:0]
}

// box returns a new msgBox.
func (a *arena) box() *msgBox {
	if a == nil {
		return new(msgBox)
	}
	return take(&a.boxes, a.chunkLen)
}

// take returns a pointer to a new zero element of *slab, starting a new
// slab of n elements when this one is full (earlier pointers stay valid).
func take[T any](slab *[]T, n int) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, max(n, 1))
	}
	*slab = (*slab)[:len(*slab)+1]
	return &(*slab)[len(*slab)-1]
}

func (a *arena) user() *ai.UserMessage {
	if a == nil {
		return &ai.UserMessage{}
	}
	return take(&a.users, a.chunkLen)
}

func (a *arena) assistant() *ai.AssistantMessage {
	if a == nil {
		return &ai.AssistantMessage{}
	}
	return take(&a.assts, a.chunkLen)
}

func (a *arena) toolResult() *ai.ToolResultMessage {
	if a == nil {
		return &ai.ToolResultMessage{}
	}
	return take(&a.results, a.chunkLen)
}

// int returns a pointer to a new int64 holding n.
func (a *arena) int(n int64) *int64 {
	var p *int64
	if a == nil {
		p = new(int64)
	} else {
		p = take(&a.ints, a.chunkLen)
	}
	*p = n
	return p
}

// block appends a zero block to the array that started at start in the
// current chunk, moving that array to a new chunk when this one is full.
func (a *arena) block(start int) (int, *ai.Content) {
	if len(a.blocks) == cap(a.blocks) {
		moved := len(a.blocks) - start
		nb := make([]ai.Content, 0, max(a.chunkLen, 2*moved))
		a.blocks = append(nb, a.blocks[start:]...)
		start = 0
	}
	a.blocks = a.blocks[:len(a.blocks)+1]
	return start, &a.blocks[len(a.blocks)-1]
}

func (c *cur) ws() {
	for c.i < len(c.b) && isWS(c.b[c.i]) {
		c.i++
		c.sawWS = true
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

// keySet is a list of keys in the order pi writes them, each with the
// bytes `"key":` as little-endian words, so that knownKey can recognise one
// with a few word compares.
type keySet struct {
	names []string
	pats  []keyPat
}

type keyPat struct {
	n    int       // len(`"key":`)
	w, m [3]uint64 // words and masks of `"key":`
}

func newKeySet(names []string) *keySet {
	ks := &keySet{names: names, pats: make([]keyPat, len(names))}
	for i, k := range names {
		lit := `"` + k + `":`
		p := &ks.pats[i]
		p.n = len(lit)
		if p.n > 24 {
			p.n = 0 // never matched: scanned by key
			continue
		}
		for j := 0; j < p.n; j++ {
			p.w[j/8] |= uint64(lit[j]) << (8 * (j % 8))
			p.m[j/8] |= 0xff << (8 * (j % 8))
		}
	}
	return ks
}

// knownKey is key for an object whose keys are usually ks.names[*at:], in
// that order: the next few of them are compared with the bytes first (so
// a key is usually found without being scanned), and only a key that is
// none of them is scanned by key.
func (c *cur) knownKey(ks *keySet, at *int) string {
	b := c.b[c.i:]
	if len(b) >= 24 {
		w0 := binary.LittleEndian.Uint64(b)
		w1 := binary.LittleEndian.Uint64(b[8:])
		w2 := binary.LittleEndian.Uint64(b[16:])
		for j := *at; j < len(ks.pats) && j < *at+4; j++ {
			p := &ks.pats[j]
			if p.n != 0 && w0&p.m[0] == p.w[0] && w1&p.m[1] == p.w[1] && w2&p.m[2] == p.w[2] {
				c.i += p.n
				*at = j + 1
				c.ws()
				return ks.names[j]
			}
		}
	}
	return c.key()
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

// int reads an integer of up to 18 digits, validating and converting in
// one pass; anything else (a fraction, an exponent, more digits) is bad,
// which sends the message to ai.DecodeMessage.
func (c *cur) int() int64 {
	b, i := c.b, c.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var n int64
	for i < len(b) && isDigit(b[i]) {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	d := i - s
	if d == 0 || d > 18 || (d > 1 && b[s] == '0') || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		c.bad = true
		return 0
	}
	c.i = i
	if neg {
		n = -n
	}
	return n
}

// float reads a number: a plain decimal of up to 15 digits is validated
// and converted in one pass (see fastFloat), anything else goes through
// raw and fastFloat.
func (c *cur) float() float64 {
	b, i := c.b, c.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var mant uint64
	for i < len(b) && isDigit(b[i]) {
		mant = mant*10 + uint64(b[i]-'0')
		i++
	}
	ip := i - s
	frac := 0
	if i < len(b) && b[i] == '.' {
		i++
		f := i
		for i < len(b) && isDigit(b[i]) {
			mant = mant*10 + uint64(b[i]-'0')
			i++
		}
		frac = i - f
		if frac == 0 {
			c.bad = true
			return 0
		}
	}
	if ip == 0 || ip+frac > 15 || (ip > 1 && b[s] == '0') || (i < len(b) && (b[i] == 'e' || b[i] == 'E')) {
		f, ok := fastFloat(c.raw())
		if !ok {
			c.bad = true
		}
		return f
	}
	c.i = i
	f := float64(mant) / float64pow10[frac]
	if neg {
		f = -f
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
	at := 0
	if !c.next('}', &first) || c.knownKey(userSet, &at) != "role" {
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
	at := 0
	for !c.bad && c.next('}', first) {
		switch k := c.knownKey(userSet, &at); k {
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
	at := 0
	for !c.bad && c.next('}', first) {
		switch k := c.knownKey(assistantSet, &at); k {
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
			m.DurationMs = c.ar.int(c.int())
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
	at := 0
	for !c.bad && c.next('}', first) {
		switch k := c.knownKey(toolResultSet, &at); k {
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
			m.DurationMs = c.ar.int(c.int())
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
	at := 0
	for !c.bad && c.next('}', &first) {
		switch k := c.knownKey(usageSet, &at); k {
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
	at := 0
	for !c.bad && c.next('}', &first) {
		switch k := c.knownKey(costSet, &at); k {
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
	first := true
	if a := c.ar; a != nil {
		// Decode straight into the arena: the blocks of one array are
		// contiguous there (see arena.block).
		start := len(a.blocks)
		for !c.bad && c.next(']', &first) {
			var b *ai.Content
			start, b = a.block(start)
			fastBlock(c, b)
		}
		end := len(a.blocks)
		if start == end {
			return []ai.Content{} // empty, not nil, like encoding/json
		}
		return a.blocks[start:end:end]
	}
	out := []ai.Content{}
	for !c.bad && c.next(']', &first) {
		out = append(out, ai.Content{})
		fastBlock(c, &out[len(out)-1])
	}
	return out
}

func fastBlock(c *cur, b *ai.Content) {
	if !c.open('{') {
		return
	}
	first := true
	at := 0
	if !c.next('}', &first) || c.knownKey(textSet, &at) != "type" {
		c.bad = true
		return
	}
	b.Type = c.str()
	var known []string
	var knownSet *keySet
	switch b.Type {
	case ai.ContentText:
		known, knownSet = textKeys, textSet
	case ai.ContentThinking:
		known, knownSet = thinkingKeys, thinkingSet
	case ai.ContentImage:
		known, knownSet = imageKeys, imageSet
	case ai.ContentToolCall:
		known, knownSet = toolCallKeys, toolCallSet
	default:
		c.bad = true
		return
	}
	for !c.bad && c.next('}', &first) {
		k := c.knownKey(knownSet, &at)
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
		case b.Type == ai.ContentImage && k == "url":
			b.URL = c.str()
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
	// A decimal with at most 15 digits and no exponent: the mantissa and
	// the power of ten are both exact in a float64, so one division is
	// correctly rounded (strconv's own exact fast path). Costs are written
	// like 0.0015, so this is almost always taken.
	i, neg := 0, v[0] == '-'
	if neg {
		i = 1
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case isDigit(c):
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
			continue
		case c == '.' && !dot:
			dot = true
			continue
		}
		break
	}
	if i == len(v) && digits > 0 && digits <= 15 && (!dot || frac > 0) {
		f := float64(mant) / float64pow10[frac]
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}
