package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// chunkData is what the stream reader uses of one chat.completion.chunk.
//
// It is filled by decodeChunk, a small hand-written decoder of just these
// members, or, for any chunk that decoder does not handle with certainty
// (unusual types, surrogate escapes, invalid UTF-8, x_groq, invalid JSON),
// by decodeChunkJSON, which decodes everything as the openai-go SDK's
// ChatCompletionChunk did. decodeChunk only accepts input on which both
// give the same result: it validates the JSON as strictly as encoding/json
// does and decodes the members it reads the way the SDK's decoder (gjson,
// apijson) does.
type chunkData struct {
	id string

	hasUsage bool // the SDK's ch.JSON.Usage.Valid(), or usage from x_groq
	usage    usageData

	hasChoice      bool // choices[0] exists
	content        string
	refusal        string
	reasoningField string // the first of reasoningFields with a non-empty string value
	reasoningText  string
	toolCalls      []toolCallData
	finish         string
}

type usageData struct {
	prompt, completion, cached, cacheWrite int64
	cacheHit                               string // raw prompt_cache_hit_tokens (DeepSeek), "" when absent
}

type toolCallData struct {
	index          int64
	id, name, args string
}

// decodeChunkData decodes a chunk: with decodeChunk, or, when that
// declines, with decodeChunkJSON.
func decodeChunkData(data []byte, needID bool, d *chunkData) error {
	if decodeChunk(data, needID, d) {
		return nil
	}
	return decodeChunkJSON(data, d)
}

// decodeChunkJSON decodes any chunk the way the openai-go SDK decodes a
// ChatCompletionChunk (json.Unmarshal into it, which hands the validated
// text to the SDK's gjson-based decoder), for the members chunkData holds:
//   - invalid JSON is encoding/json's syntax error; a top-level value
//     other than an object or null is the type error the SDK returned;
//   - of a repeated key, the last one counts;
//   - a string member holds gjson's String() of any non-null value (a
//     number's text, "true", an object's raw text), an integer member its
//     Int();
//   - a member of object type (usage, delta, function, an element of
//     choices or tool_calls) that is not an object or null is left empty,
//     and an array with such an element is dropped whole; a member of
//     array type that is not an array is left empty;
//   - usage counts only when it is an object;
//   - the reasoning members and x_groq are read from their raw text with
//     encoding/json, as the reader read the SDK's extra fields.
//
// The tests compare it with the SDK on random and fuzzed chunks.
func decodeChunkJSON(data []byte, d *chunkData) error {
	if !json.Valid(data) {
		var v any
		return json.Unmarshal(data, &v) // its syntax error
	}
	root := gjson.ParseBytes(data)
	if root.Type != gjson.Null && !root.IsObject() {
		return errors.New("json: cannot unmarshal " + jsonKind(root) + " into Go value of type openai.ChatCompletionChunk")
	}
	*d = chunkData{toolCalls: d.toolCalls[:0]}
	m := root.Map()
	d.id = jsonString(m["id"])
	if u, ok := m["usage"]; ok && u.IsObject() {
		d.hasUsage = true
		d.usage = usageFromJSON(u)
	} else if xg, ok := m["x_groq"]; ok {
		// Groq's older streams carry usage in x_groq.
		var v struct {
			Usage *groqUsage `json:"usage"`
		}
		if json.Unmarshal([]byte(xg.Raw), &v) == nil && v.Usage != nil {
			d.hasUsage = true
			d.usage = v.Usage.u
		}
	}
	choices, ok := objects(m["choices"])
	if !ok || len(choices) == 0 {
		return nil
	}
	choice := choices[0].Map()
	d.hasChoice = true
	d.finish = jsonString(choice["finish_reason"])
	delta := objectMap(choice["delta"])
	d.content = jsonString(delta["content"])
	d.refusal = jsonString(delta["refusal"])
	for _, f := range reasoningFields {
		if v, ok := delta[f]; ok {
			var s string
			if json.Unmarshal([]byte(v.Raw), &s) == nil && s != "" {
				d.reasoningField, d.reasoningText = f, s
				break
			}
		}
	}
	calls, _ := objects(delta["tool_calls"])
	for _, c := range calls {
		cm := c.Map()
		fn := objectMap(cm["function"])
		d.toolCalls = append(d.toolCalls, toolCallData{
			index: jsonInt(cm["index"]), id: jsonString(cm["id"]),
			name: jsonString(fn["name"]), args: jsonString(fn["arguments"]),
		})
	}
	return nil
}

// groqUsage decodes x_groq's usage member.
type groqUsage struct{ u usageData }

func (g *groqUsage) UnmarshalJSON(b []byte) error {
	r := gjson.ParseBytes(b)
	if r.Type != gjson.Null && !r.IsObject() {
		return errors.New("usage is not an object")
	}
	g.u = usageFromJSON(r)
	return nil
}

func usageFromJSON(r gjson.Result) usageData {
	m := r.Map()
	details := objectMap(m["prompt_tokens_details"])
	u := usageData{
		prompt:     jsonInt(m["prompt_tokens"]),
		completion: jsonInt(m["completion_tokens"]),
		cached:     jsonInt(details["cached_tokens"]),
		cacheWrite: jsonInt(details["cache_write_tokens"]),
	}
	if v, ok := m["prompt_cache_hit_tokens"]; ok {
		u.cacheHit = v.Raw
	}
	return u
}

// jsonString is a string member's value (absent and null: "").
func jsonString(r gjson.Result) string {
	if r.Type == gjson.Null {
		return ""
	}
	return r.String()
}

// jsonInt is an integer member's value (absent and null: 0).
func jsonInt(r gjson.Result) int64 {
	if r.Type == gjson.Null {
		return 0
	}
	return r.Int()
}

// objectMap is the members of an object-typed member: none unless it is
// an object.
func objectMap(r gjson.Result) map[string]gjson.Result {
	if !r.IsObject() {
		return nil
	}
	return r.Map()
}

// objects is an array member whose elements are objects or null; ok is
// false when it is absent, null, not an array or has another element.
func objects(r gjson.Result) (elems []gjson.Result, ok bool) {
	if !r.IsArray() {
		return nil, false
	}
	elems = r.Array()
	for _, e := range elems {
		if e.Type != gjson.Null && !e.IsObject() {
			return nil, false
		}
	}
	return elems, true
}

// jsonKind names a JSON value's kind as encoding/json's type errors do.
func jsonKind(r gjson.Result) string {
	switch r.Type {
	case gjson.String:
		return "string"
	case gjson.Number:
		return "number"
	case gjson.True, gjson.False:
		return "bool"
	}
	if r.IsArray() {
		return "array"
	}
	return "object"
}

// decodeChunk is the fast decoder. It reports false, leaving d in any
// state, when the SDK must decode the chunk. With needID false the id is
// not decoded (the reader only needs the first one).
func decodeChunk(data []byte, needID bool, d *chunkData) bool {
	*d = chunkData{toolCalls: d.toolCalls[:0]}
	p := jparser{b: data}
	ok := p.object(chunkKeys, func(key []byte) bool {
		switch string(key) {
		case "id":
			if !needID {
				return p.skip(0)
			}
			var ok bool
			d.id, ok = p.sdkString()
			return ok
		case "usage":
			d.hasUsage, d.usage = false, usageData{}
			if p.null() {
				return true
			}
			d.hasUsage = p.usage(&d.usage)
			return d.hasUsage
		case "choices":
			d.hasChoice = false
			d.content, d.refusal, d.reasoningField, d.reasoningText, d.finish = "", "", "", "", ""
			d.toolCalls = d.toolCalls[:0]
			if p.null() {
				return true
			}
			return p.choices(d)
		case "x_groq":
			return false
		}
		return !errorKey(key) && p.skip(0)
	})
	if !ok {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// errorKey reports whether a top-level key could be the "error" member
// streamErrorEvent looks for (encoding/json matches keys without regard
// to case); non-ASCII keys of about that length are declined as well.
func errorKey(key []byte) bool {
	if len(key) < 5 || len(key) > 15 {
		return false
	}
	if len(key) == 5 && strings.EqualFold(string(key), "error") {
		return true
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func (p *jparser) usage(u *usageData) bool {
	return p.object(usageKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "prompt_tokens":
			u.prompt, ok = p.sdkInt()
		case "completion_tokens":
			u.completion, ok = p.sdkInt()
		case "prompt_tokens_details":
			u.cached, u.cacheWrite = 0, 0
			ok = p.null() || p.promptDetails(u)
		case "prompt_cache_hit_tokens":
			var raw []byte
			raw, ok = p.raw()
			u.cacheHit = string(raw)
		default:
			ok = p.skip(0)
		}
		return ok
	})
}

func (p *jparser) promptDetails(u *usageData) bool {
	return p.object(detailsKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "cached_tokens":
			u.cached, ok = p.sdkInt()
		case "cache_write_tokens":
			u.cacheWrite, ok = p.sdkInt()
		default:
			ok = p.skip(0)
		}
		return ok
	})
}

// choices reads the array; only its first element is used, the others are
// only checked to be objects (the SDK drops all choices otherwise).
func (p *jparser) choices(d *chunkData) bool {
	return p.objects(func(n int) bool {
		if n > 0 {
			return p.skip(0)
		}
		d.hasChoice = true
		return p.choice(d)
	})
}

func (p *jparser) choice(d *chunkData) bool {
	return p.object(choiceKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "delta":
			d.content, d.refusal, d.reasoningField, d.reasoningText = "", "", "", ""
			d.toolCalls = d.toolCalls[:0]
			ok = p.null() || p.delta(d)
		case "finish_reason":
			d.finish, ok = p.sdkString()
		default:
			ok = p.skip(0)
		}
		return ok
	})
}

func (p *jparser) delta(d *chunkData) bool {
	// The raw values of the reasoning members (the last of each name wins,
	// as in the SDK's map of extra fields).
	var reasoning [3][]byte
	ok := p.object(deltaKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "content":
			d.content, ok = p.sdkString()
		case "refusal":
			d.refusal, ok = p.sdkString()
		case "tool_calls":
			d.toolCalls = d.toolCalls[:0]
			ok = p.null() || p.toolCalls(d)
		case "reasoning_content", "reasoning", "reasoning_text":
			i := 0
			for i < len(reasoningFields) && reasoningFields[i] != string(key) {
				i++
			}
			reasoning[i], ok = p.raw()
		default:
			ok = p.skip(0)
		}
		return ok
	})
	if !ok {
		return false
	}
	for i, raw := range reasoning {
		if raw == nil {
			continue
		}
		// json.Unmarshal into a string, as the SDK path does.
		s, ok := plainString(raw)
		if !ok {
			if json.Unmarshal(raw, &s) != nil {
				s = ""
			}
		}
		if s != "" {
			d.reasoningField, d.reasoningText = reasoningFields[i], s
			break
		}
	}
	return true
}

func (p *jparser) toolCalls(d *chunkData) bool {
	return p.objects(func(int) bool {
		var tc toolCallData
		if !p.toolCall(&tc) {
			return false
		}
		d.toolCalls = append(d.toolCalls, tc)
		return true
	})
}

func (p *jparser) toolCall(tc *toolCallData) bool {
	return p.object(toolKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "index":
			tc.index, ok = p.sdkInt()
		case "id":
			tc.id, ok = p.sdkString()
		case "function":
			tc.name, tc.args = "", ""
			ok = p.null() || p.function(tc)
		default:
			ok = p.skip(0)
		}
		return ok
	})
}

func (p *jparser) function(tc *toolCallData) bool {
	return p.object(funcKeys, func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "name":
			tc.name, ok = p.sdkString()
		case "arguments":
			tc.args, ok = p.sdkString()
		default:
			ok = p.skip(0)
		}
		return ok
	})
}

// Member names each object decoder reads. A repeated member is skipped:
// the SDK's decoder (gjson's map of an object) keeps the first.
var (
	chunkKeys   = []string{"id", "usage", "choices", "x_groq"}
	usageKeys   = []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "prompt_cache_hit_tokens"}
	detailsKeys = []string{"cached_tokens", "cache_write_tokens"}
	choiceKeys  = []string{"delta", "finish_reason"}
	deltaKeys   = []string{"content", "refusal", "tool_calls", "reasoning_content", "reasoning", "reasoning_text"}
	toolKeys    = []string{"index", "id", "function"}
	funcKeys    = []string{"name", "arguments"}
)

// object reads an object (after whitespace). member is called with p at
// the value of each member, except a repeat of one of names, whose value
// is skipped; member consumes the value and reports false to decline the
// chunk. object reports false on a syntax error or a declined member.
func (p *jparser) object(names []string, member func(key []byte) bool) bool {
	if !p.objectStart() {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		key, more := p.nextKey(first)
		if !more {
			return !p.err
		}
		if p.repeated(key, names, &seen) {
			if !p.skip(0) {
				return false
			}
			continue
		}
		if !member(key) {
			return false
		}
	}
}

// repeated reports whether key, one of names, was seen before in this
// object, and marks it seen.
func (p *jparser) repeated(key []byte, names []string, seen *uint32) bool {
	for i, n := range names {
		if n == string(key) {
			rep := *seen&(1<<i) != 0
			*seen |= 1 << i
			return rep
		}
	}
	return false
}

// objects reads an array whose elements must all be objects, calling elem
// with p at each element (n is its index); elem consumes the element and
// reports false to decline the chunk.
func (p *jparser) objects(elem func(n int) bool) bool {
	if !p.arrayStart() {
		return false
	}
	for n := 0; p.nextElem(n == 0); n++ {
		if p.peek() != '{' || !elem(n) {
			return false
		}
	}
	return !p.err
}

// raw skips a value and returns its text.
func (p *jparser) raw() ([]byte, bool) {
	start := p.i
	ok := p.skip(0)
	return p.b[start:p.i], ok
}

// ---------------------------------------------------------------------------
// A strict JSON scanner (the grammar encoding/json accepts) over one chunk.

type jparser struct {
	b   []byte
	i   int
	err bool // a syntax error was found by nextKey or nextElem
}

func (p *jparser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// null consumes a null literal (after whitespace) if there is one.
func (p *jparser) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// objectStart consumes '{' (after whitespace).
func (p *jparser) objectStart() bool {
	p.ws()
	if p.peek() != '{' {
		return false
	}
	p.i++
	return true
}

// nextKey reads the next member's key and its colon; more is false at the
// closing brace or on a syntax error (p.err). Keys with escapes are
// declined (an error) as their unescaped form would have to be compared.
func (p *jparser) nextKey(first bool) (key []byte, more bool) {
	p.ws()
	if p.peek() == '}' && first {
		p.i++
		return nil, false
	}
	if !first {
		switch p.peek() {
		case '}':
			p.i++
			return nil, false
		case ',':
			p.i++
			p.ws()
		default:
			p.err = true
			return nil, false
		}
	}
	if p.peek() != '"' {
		p.err = true
		return nil, false
	}
	start := p.i + 1
	i := start
	for i < len(p.b) && p.b[i] != '"' {
		if c := p.b[i]; c == '\\' || c < 0x20 {
			p.err = true
			return nil, false
		}
		i++
	}
	if i >= len(p.b) {
		p.err = true
		return nil, false
	}
	key = p.b[start:i]
	p.i = i + 1
	p.ws()
	if p.peek() != ':' {
		p.err = true
		return nil, false
	}
	p.i++
	p.ws()
	return key, true
}

// arrayStart consumes '[' (after whitespace).
func (p *jparser) arrayStart() bool {
	p.ws()
	if p.peek() != '[' {
		return false
	}
	p.i++
	return true
}

// nextElem moves to the next element; false at the closing bracket or on a
// syntax error (p.err).
func (p *jparser) nextElem(first bool) bool {
	p.ws()
	if p.peek() == ']' {
		if first {
			p.i++
			return false
		}
	}
	if !first {
		switch p.peek() {
		case ']':
			p.i++
			return false
		case ',':
			p.i++
		default:
			p.err = true
			return false
		}
	}
	p.ws()
	return true
}

const maxSkipDepth = 200

// skip validates and skips any value.
func (p *jparser) skip(depth int) bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, _, ok := p.scanString()
		return ok
	case c == '{':
		if depth >= maxSkipDepth {
			return false
		}
		return p.object(nil, func([]byte) bool { return p.skip(depth + 1) })
	case c == '[':
		if depth >= maxSkipDepth {
			return false
		}
		p.i++
		for n := 0; p.nextElem(n == 0); n++ {
			if !p.skip(depth + 1) {
				return false
			}
		}
		return !p.err
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.number()
		return ok
	}
	return false
}

func (p *jparser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// number scans a number; plainInt reports whether it is an integer
// literal without fraction or exponent.
func (p *jparser) number() (plainInt bool, ok bool) {
	b := p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false, false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false, false
	}
	plainInt = true
	if i < len(b) && b[i] == '.' {
		plainInt = false
		i++
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == n {
			return false, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		plainInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == n {
			return false, false
		}
	}
	p.i = i
	return plainInt, true
}

// scanString validates the string at p.i and moves past it; it returns the
// bytes between the quotes and whether they hold an escape.
func (p *jparser) scanString() (body []byte, escaped bool, ok bool) {
	b := p.b
	start := p.i + 1
	i := start
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return b[start:i], escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return nil, false, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			i++
		}
	}
	return nil, false, false
}

// sdkString reads a member the SDK decodes as a Go string: a JSON string
// (its text as gjson unescapes it) or null (""). Anything else, invalid
// UTF-8 and surrogate escapes are declined.
func (p *jparser) sdkString() (string, bool) {
	p.ws()
	switch p.peek() {
	case 'n':
		return "", p.lit("null")
	case '"':
	default:
		return "", false
	}
	body, escaped, ok := p.scanString()
	if !ok {
		return "", false
	}
	return decodeString(body, escaped)
}

// plainString decodes a JSON string value (the whole of raw) when that is
// simple: valid UTF-8 and no surrogate escapes, where encoding/json and
// gjson agree.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	p := jparser{b: raw}
	body, escaped, ok := p.scanString()
	if !ok || p.i != len(raw) {
		return "", false
	}
	return decodeString(body, escaped)
}

// decodeString decodes a validated string body (escaped: it holds an
// escape); false for invalid UTF-8 and for surrogate escapes (gjson and
// encoding/json differ on unpaired ones).
func decodeString(body []byte, escaped bool) (string, bool) {
	if !utf8.Valid(body) {
		return "", false
	}
	if !escaped {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			var r rune
			for _, h := range body[i+2 : i+6] {
				r = r<<4 | rune(hexVal(h))
			}
			if utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		}
		i += 2
	}
	return string(out), true
}

// sdkInt reads a member the SDK decodes as an int64: an integer literal of
// at most 15 digits (exact in a float64, where gjson is exact too) or null
// (0). Anything else is declined.
func (p *jparser) sdkInt() (int64, bool) {
	p.ws()
	if p.peek() == 'n' {
		return 0, p.lit("null")
	}
	start := p.i
	plain, ok := p.number()
	if !ok || !plain || p.i-start > 16 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	if err != nil || p.i-start-boolInt(p.b[start] == '-') > 15 {
		return 0, false
	}
	return n, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// sseReader reads the data of server-sent events exactly as the SDK's
// ssestream decoder does (the same line scanner and limits; an event is
// dispatched at an empty line; data lines are joined, each followed by a
// newline; comments and other fields are ignored; an unterminated last
// event is dropped), reusing one buffer for the data of every event.
type sseReader struct {
	scn  *bufio.Scanner
	data []byte
	err  error
}

func newSSEReader(body io.Reader) *sseReader {
	scn := bufio.NewScanner(body)
	scn.Buffer(nil, bufio.MaxScanTokenSize<<9)
	return &sseReader{scn: scn}
}

// next reads the next event; its data is valid until the next call.
func (s *sseReader) next() bool {
	if s.err != nil {
		return false
	}
	s.data = s.data[:0]
	for s.scn.Scan() {
		line := s.scn.Bytes()
		if len(line) == 0 {
			if len(s.data) == 0 {
				continue
			}
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(name) == "data" {
			s.data = append(s.data, value...)
			s.data = append(s.data, '\n')
		}
	}
	s.err = s.scn.Err()
	return false
}
