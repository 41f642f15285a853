package session

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// Verbatim messages.
//
// Opening a session does not decode the messages of its message entries:
// a message whose bytes are exactly what ai.AppendMessage writes for it
// once decoded is only checked while the line is read, and decoded on first
// use (Entry.Message), from the entry's line. Answers that carry messages
// (get_messages) copy those bytes instead of encoding the message again.
//
// scanVerbatim decides it in the pass that validates the line. It follows
// the hand-written encoders of internal/ai member by member: the keys of
// the user, assistant and toolResult messages, of their content blocks,
// usage and cost, in the order the encoders write them, every member the
// encoders always write present, the optional ones present only with a
// value the encoders write (a non-empty string, true), unknown members
// only after the known ones; no whitespace; strings escaped as
// jsonx.AppendString escapes them (valid UTF-8, only the escapes it
// writes); integers and numbers as jsonx.AppendInt and jsonx.AppendFloat
// write them; nested raw JSON compact and without \u2028 or \u2029
// escapes. It accepts only messages the fast decoder (fastDecode) decodes
// without falling back to encoding/json. Anything else (another role, a
// key order the encoders do not write, an escape they would write
// differently) is decoded at once, as before, and encoded when it is
// written out. TestVerbatimRoundTrip checks on random, generated and
// mutated messages that every message scanVerbatim accepts is written
// back byte for byte.

// Role codes of message entries, known without decoding the message.
const (
	roleNone       uint8 = iota // not a message entry, or a message that did not decode
	roleUser                    // "user"
	roleAssistant               // "assistant"
	roleToolResult              // "toolResult"
	roleSystem                  // "system"
	roleOther                   // any other role: ask the message
)

// vkind is how a member's value is written by the encoders.
type vkind uint8

const (
	kStr         vkind = iota // a string, always written
	kOptStr                   // a string, written when not empty (omitempty)
	kInt                      // an integer, always written
	kOptInt                   // a *int64, written when set
	kFloat                    // a float64, always written
	kBool                     // a bool, always written
	kOptTrue                  // a bool, written when true (omitempty)
	kOptBool                  // a *bool, written when set
	kRaw                      // raw JSON, always written
	kOptRaw                   // raw JSON, written when not empty (omitempty)
	kBlocks                   // content blocks, always written
	kUserContent              // a string or content blocks, always written
	kUsage                    // a usage object, always written
	kOptUsage                 // a *Usage, written when set
	kCost                     // a cost object, always written
	kStopReason               // kStr, whose place is noted (vscan.stop)
)

func (k vkind) required() bool {
	switch k {
	case kOptStr, kOptInt, kOptTrue, kOptBool, kOptRaw, kOptUsage:
		return false
	}
	return true
}

type vfield struct {
	key  string
	kind vkind
}

// vschema is an object's members as the encoders write them, with their
// `"key":` patterns (keySet), so that the expected next keys are
// recognised with a few word compares.
type vschema struct {
	fields []vfield
	keys   *keySet
}

func newVSchema(fields ...vfield) *vschema {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.key
	}
	return &vschema{fields: fields, keys: newKeySet(names)}
}

// vschemas are the members as the encoders write them
// (internal/ai/wire.go), built on first use (not at start-up). The first
// member of a message (role) and of a block (type) is checked before the
// schema is chosen.
type vschemas struct {
	user, assistant, toolResult, usage, cost, text, thinking, image, toolCall *vschema
}

var vtab = lazy.Value[*vschemas]{New: func() *vschemas {
	return &vschemas{
		user: newVSchema(vfield{"role", kStr}, vfield{"content", kUserContent}, vfield{"timestamp", kInt}),
		assistant: newVSchema(vfield{"role", kStr}, vfield{"content", kBlocks}, vfield{"api", kStr}, vfield{"provider", kStr},
			vfield{"model", kStr}, vfield{"usage", kUsage}, vfield{"stopReason", kStopReason}, vfield{"errorMessage", kOptStr},
			vfield{"timestamp", kInt}, vfield{"responseId", kOptStr}, vfield{"rawStopReason", kOptStr}, vfield{"durationMs", kOptInt},
			vfield{"thinkingLevel", kOptStr}, vfield{"providerThinkingLevel", kOptStr}, vfield{"endTurn", kOptBool}),
		toolResult: newVSchema(vfield{"role", kStr}, vfield{"toolCallId", kStr}, vfield{"toolName", kStr}, vfield{"content", kBlocks},
			vfield{"details", kOptRaw}, vfield{"usage", kOptUsage}, vfield{"isError", kBool}, vfield{"durationMs", kOptInt},
			vfield{"nestedCalls", kOptRaw}, vfield{"timestamp", kInt}),
		usage: newVSchema(vfield{"input", kInt}, vfield{"output", kInt}, vfield{"cacheRead", kInt}, vfield{"cacheWrite", kInt},
			vfield{"totalTokens", kInt}, vfield{"cost", kCost}),
		cost: newVSchema(vfield{"input", kFloat}, vfield{"output", kFloat}, vfield{"cacheRead", kFloat}, vfield{"cacheWrite", kFloat},
			vfield{"total", kFloat}),
		text:     newVSchema(vfield{"type", kStr}, vfield{"text", kStr}, vfield{"textSignature", kOptStr}),
		thinking: newVSchema(vfield{"type", kStr}, vfield{"thinking", kStr}, vfield{"thinkingSignature", kOptStr}, vfield{"redacted", kOptTrue}),
		image:    newVSchema(vfield{"type", kStr}, vfield{"data", kStr}, vfield{"mimeType", kStr}),
		toolCall: newVSchema(vfield{"type", kStr}, vfield{"id", kStr}, vfield{"name", kStr}, vfield{"arguments", kRaw},
			vfield{"thoughtSignature", kOptStr}, vfield{"argumentsError", kOptStr}, vfield{"namespace", kOptStr}),
	}
}}

// vscan is a cursor over a message that checks it is verbatim.
type vscan struct {
	b    []byte
	i    int
	stop int // where an assistant's stopReason value starts
	t    *vschemas
}

// scanVerbatim reports whether the JSON value at b[i:] is a message that
// ai.AppendMessage writes back byte for byte once decodeMessage has decoded
// it, and if so where it ends, its role and, for an assistant message,
// where its stopReason value starts. ok is false for anything else, valid
// JSON or not (the caller validates it the general way then).
func scanVerbatim(b []byte, i int) (end int, role uint8, stop int, ok bool) {
	v := vscan{b: b, i: i, t: vtab.Get()}
	if !v.lit(`{"role":`) {
		return 0, 0, 0, false
	}
	var s *vschema
	switch {
	case v.lit(`"user"`):
		s, role = v.t.user, roleUser
	case v.lit(`"assistant"`):
		s, role = v.t.assistant, roleAssistant
	case v.lit(`"toolResult"`):
		s, role = v.t.toolResult, roleToolResult
	default:
		return 0, 0, 0, false
	}
	if !v.members(s, 1) {
		return 0, 0, 0, false
	}
	return v.i, role, v.stop, true
}

// lit consumes the bytes of s if they come next.
func (v *vscan) lit(s string) bool {
	if len(v.b)-v.i >= len(s) && string(v.b[v.i:v.i+len(s)]) == s {
		v.i += len(s)
		return true
	}
	return false
}

// members checks the rest of an object whose first at members (of sc)
// have been read, up to and including the closing brace.
func (v *vscan) members(sc *vschema, at int) bool {
	s := sc.fields
	extras := false // unknown members follow: nothing known may come now
	first := at == 0
	for {
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case '}':
			v.i++
			return allOptional(s[at:])
		case ',':
			if first {
				return false
			}
			v.i++
		default:
			if !first {
				return false
			}
		}
		first = false
		if !extras {
			if j := v.expectedKey(sc.keys, at); j >= 0 {
				if !allOptional(s[at:j]) {
					return false
				}
				at = j + 1
				if !v.value(s[j].kind) {
					return false
				}
				continue
			}
		}
		ks := v.i
		ke, ok := canonString(v.b, ks)
		if !ok || ke >= len(v.b) || v.b[ke] != ':' {
			return false
		}
		key := v.b[ks+1 : ke-1]
		v.i = ke + 1
		// Not one of the keys expected next: an unknown member, or a known
		// key out of place. The fast decoder gives up on a key that
		// matches a known one case-insensitively (encoding/json would
		// take it), a repeated or misplaced known key is not where the
		// encoder writes it, and the encoder writes unknown members last.
		for k := range s {
			if strings.EqualFold(string(key), s[k].key) {
				return false
			}
		}
		if !allOptional(s[at:]) {
			return false
		}
		at, extras = len(s), true
		if !v.raw() {
			return false
		}
	}
}

// expectedKey consumes `"key":` when key is one of the known keys from
// position at on, and returns its position (-1 when the next key is none
// of them; nothing is consumed then).
func (v *vscan) expectedKey(ks *keySet, at int) int {
	b := v.b[v.i:]
	var w0, w1, w2 uint64
	wide := len(b) >= 24
	if wide {
		w0 = binary.LittleEndian.Uint64(b)
		w1 = binary.LittleEndian.Uint64(b[8:])
		w2 = binary.LittleEndian.Uint64(b[16:])
	}
	for j := at; j < len(ks.pats); j++ {
		if p := &ks.pats[j]; wide && p.n != 0 {
			if w0&p.m[0] == p.w[0] && w1&p.m[1] == p.w[1] && w2&p.m[2] == p.w[2] {
				v.i += p.n
				return j
			}
			continue
		}
		// Near the end of the line, or a key too long for the words.
		k := ks.names[j]
		if len(b) >= len(k)+3 && b[0] == '"' && string(b[1:1+len(k)]) == k && b[1+len(k)] == '"' && b[2+len(k)] == ':' {
			v.i += len(k) + 3
			return j
		}
	}
	return -1
}

func allOptional(s []vfield) bool {
	for _, f := range s {
		if f.kind.required() {
			return false
		}
	}
	return true
}

// value checks one member value of the given kind.
func (v *vscan) value(k vkind) bool {
	switch k {
	case kStopReason:
		v.stop = v.i
		return v.value(kStr)
	case kStr, kOptStr:
		e, ok := canonString(v.b, v.i)
		if !ok || k == kOptStr && e-v.i == 2 {
			return false
		}
		v.i = e
		return true
	case kInt, kOptInt:
		return v.int()
	case kFloat:
		return v.float()
	case kBool, kOptBool:
		return v.lit("true") || v.lit("false")
	case kOptTrue:
		return v.lit("true")
	case kRaw, kOptRaw:
		return v.raw()
	case kBlocks:
		return v.blocks()
	case kUserContent:
		if v.i < len(v.b) && v.b[v.i] == '"' {
			return v.value(kStr)
		}
		return v.blocks()
	case kUsage, kOptUsage:
		return v.lit("{") && v.members(v.t.usage, 0)
	case kCost:
		return v.lit("{") && v.members(v.t.cost, 0)
	}
	return false
}

// blocks checks an array of content blocks.
func (v *vscan) blocks() bool {
	if !v.lit("[") {
		return false
	}
	if v.lit("]") {
		return true
	}
	for {
		if !v.lit(`{"type":`) {
			return false
		}
		var s *vschema
		switch {
		case v.lit(`"text"`):
			s = v.t.text
		case v.lit(`"thinking"`):
			s = v.t.thinking
		case v.lit(`"toolCall"`):
			s = v.t.toolCall
		case v.lit(`"image"`):
			s = v.t.image
		default:
			return false
		}
		if !v.members(s, 1) {
			return false
		}
		if v.lit("]") {
			return true
		}
		if !v.lit(",") {
			return false
		}
	}
}

// raw checks a JSON value that jsonx.AppendRaw writes as it is: valid,
// compact, and without an escaped U+2028 or U+2029 (which it unescapes).
func (v *vscan) raw() bool {
	e := skipValue(v.b, v.i, 1)
	if e < 0 {
		return false
	}
	r := v.b[v.i:e]
	v.i = e
	return isCompact(r) && !bytes.Contains(r, []byte(`\u202`))
}

// isCompact reports whether the valid JSON value b has no whitespace
// outside its strings.
func isCompact(b []byte) bool {
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			i = skipStringTrusted(b, i)
		case ' ', '\t', '\n', '\r':
			return false
		default:
			i++
		}
	}
	return true
}

// int checks an integer as strconv.AppendInt writes it, of at most 18
// digits (the fast decoder's limit).
func (v *vscan) int() bool {
	b, i := v.b, v.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	d := i - s
	if d == 0 || d > 18 || b[s] == '0' && (d > 1 || neg) {
		return false
	}
	v.i = i
	return true
}

// float checks a number as jsonx.AppendFloat writes it. A plain decimal
// of at most 15 digits without trailing zeros in its fraction is what the
// shortest representation of its value prints (any two such decimals are
// different float64 values), unless it is below 1e-6, which AppendFloat
// writes with an exponent; anything else is compared with AppendFloat's
// output.
func (v *vscan) float() bool {
	b, i := v.b, v.i
	s := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	is := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	ip := i - is
	frac, zeros := 0, 0
	dot := i < len(b) && b[i] == '.'
	if dot {
		i++
		fs := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		frac = i - fs
		for zeros < frac && b[fs+zeros] == '0' {
			zeros++
		}
	}
	quick := ip > 0 && (ip == 1 || b[is] != '0') && ip+frac <= 15 &&
		(i >= len(b) || b[i] != 'e' && b[i] != 'E') &&
		(!dot || frac > 0 && b[i-1] != '0') && s == is // negative numbers: compared below
	if quick && frac > 0 && ip == 1 && b[is] == '0' && zeros >= 6 {
		quick = false // below 1e-6
	}
	if quick {
		v.i = i
		return true
	}
	e := skipNumber(b, s)
	if e < 0 {
		return false
	}
	f, err := strconv.ParseFloat(string(b[s:e]), 64)
	if err != nil {
		return false
	}
	var buf [32]byte
	out, err := jsonx.AppendFloat(buf[:0], f)
	if err != nil || string(out) != string(b[s:e]) {
		return false
	}
	v.i = e
	return true
}

// canonString reports where the JSON string at b[i] ends and whether
// jsonx.AppendString writes its decoded value back byte for byte: it is
// valid UTF-8 and uses only the escapes AppendString writes (\" \\ \b \f
// \n \r \t, and \u00xx in lower case for the other control characters).
func canonString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	e, plain := scanString(b, i)
	if e < 0 {
		return -1, false
	}
	if plain {
		return e, true
	}
	return e, canonText(b[i+1 : e-1])
}

// canonText checks the inside of a valid JSON string (see canonString).
func canonText(s []byte) bool {
	for {
		k := bytes.IndexByte(s, '\\')
		seg := s
		if k >= 0 {
			seg = s[:k]
		}
		if !utf8.Valid(seg) {
			return false
		}
		if k < 0 {
			return true
		}
		s = s[k:] // a valid escape: at least two bytes
		switch s[1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			s = s[2:]
		case 'u':
			if s[2] != '0' || s[3] != '0' || s[4] != '0' && s[4] != '1' {
				return false
			}
			lo := s[5]
			var c byte
			switch {
			case lo >= '0' && lo <= '9':
				c = lo - '0'
			case lo >= 'a' && lo <= 'f':
				c = lo - 'a' + 10
			default:
				return false
			}
			c |= (s[4] - '0') << 4
			if c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' {
				return false
			}
			s = s[6:]
		default:
			return false
		}
	}
}
