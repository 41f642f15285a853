package browse

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatToolCall renders a tool call as the short bracket expression of pi's
// tree browser (PR #1762's formatToolCall):
//
//	read        [read: <path>[:start[-end]]]  start = offset ?? 1, end = start+limit-1
//	write/edit  [write: <path>] / [edit: <path>]
//	bash        [bash: <command, \n and \t as spaces, trimmed, first 50>...]
//	grep        [grep: /<pattern>/ in <path or .>]
//	find        [find: <pattern> in <path or .>]
//	ls          [ls: <path or .>]
//	other       [name: <JSON of the arguments, first 40>...]
//
// read, write and edit take args.path or else args.file_path; grep, find and
// ls take args.path. Paths that start with home ("" = none) are shortened
// to ~. Argument values follow JavaScript's conversions (String(), ||, ??,
// +), lengths are counted in UTF-16 code units, and "..." is added only when
// something was cut. args that is not a JSON object or array counts as {}.
func FormatToolCall(name string, args json.RawMessage, home string) string {
	a := parseArgs(args)
	return formatToolCall(name, a, home)
}

// toolArgs is a tool call's arguments: the raw JSON (in JSON.stringify form)
// and its top-level members (for a duplicate key the last value, as in
// JSON.parse).
type toolArgs struct {
	raw     []byte
	members []member
}

type member struct {
	key []byte // decoded
	val []byte
}

func (a toolArgs) get(key string) (json.RawMessage, bool) {
	for i := len(a.members) - 1; i >= 0; i-- {
		if string(a.members[i].key) == key {
			return a.members[i].val, true
		}
	}
	return nil, false
}

// parseArgs normalises a tool call's arguments: an object or array is kept
// (re-encoded as JSON.stringify would write it), anything else becomes {}.
func parseArgs(raw json.RawMessage) toolArgs {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		return toolArgs{raw: []byte("{}")}
	}
	out := toolArgs{raw: jsStringify(raw)}
	if len(out.raw) == 0 || out.raw[0] != raw[0] {
		return toolArgs{raw: []byte("{}")}
	}
	if raw[0] == '{' {
		ms, ok := scanMembers(out.raw)
		if ok && hasDupKeys(ms) {
			// JSON.parse keeps one member per key: the first position,
			// the last value.
			if v, ok := parseJS(out.raw); ok {
				out.raw = appendJSValue(nil, v)
				ms, _ = scanMembers(out.raw)
			}
		}
		if !ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return toolArgs{raw: []byte("{}")}
			}
			for k, v := range m {
				ms = append(ms, member{[]byte(k), v})
			}
		}
		out.members = ms
	}
	return out
}

func hasDupKeys(ms []member) bool {
	for i := 1; i < len(ms); i++ {
		for j := 0; j < i; j++ {
			if string(ms[i].key) == string(ms[j].key) {
				return true
			}
		}
	}
	return false
}

// scanMembers splits a compact, valid JSON object into its members. ok is
// false when it meets something it does not expect (the caller then falls
// back to encoding/json).
func scanMembers(obj []byte) ([]member, bool) {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, false
	}
	out := make([]member, 0, 4)
	i := 1
	if obj[i] == '}' {
		return nil, i == len(obj)-1
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, false
		}
		end := skipString(obj, i)
		if end < 0 {
			return nil, false
		}
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, ok := unquoteFast(obj[i:end])
			if !ok {
				return nil, false
			}
			key = []byte(k)
		}
		i = end
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i++
		vend := skipValue(obj, i)
		if vend < 0 {
			return nil, false
		}
		out = append(out, member{key, obj[i:vend]})
		i = vend
		if i >= len(obj) {
			return nil, false
		}
		if obj[i] == '}' {
			return out, i == len(obj)-1
		}
		if obj[i] != ',' {
			return nil, false
		}
		i++
	}
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the compact JSON value at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// unquoteFast decodes a JSON string literal; ok is false when it is not one.
func unquoteFast(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	body := q[1 : len(q)-1]
	simple := true
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			simple = false
			break
		}
	}
	if simple && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

func formatToolCall(name string, a toolArgs, home string) string {
	shorten := func(p string) string {
		if home != "" && strings.HasPrefix(p, home) {
			return "~" + p[len(home):]
		}
		return p
	}
	// String(a[k1] || a[k2] || def)
	pick := func(def string, keys ...string) string {
		for _, k := range keys {
			if v, ok := a.get(k); ok && jsTruthy(v) {
				return jsString(v)
			}
		}
		return def
	}
	switch name {
	case "read":
		display := shorten(pick("", "path", "file_path"))
		offset, hasOffset := a.get("offset")
		limit, hasLimit := a.get("limit")
		if hasOffset || hasLimit {
			start := jsPrim{num: 1}
			if hasOffset && !isNull(offset) {
				start = toPrimitive(offset)
			}
			display += ":" + start.String()
			if hasLimit {
				end := start.plus(toPrimitive(limit)).number() - 1
				if end != 0 && !math.IsNaN(end) {
					display += "-" + jsNumber(end)
				}
			}
		}
		return "[read: " + display + "]"
	case "write", "edit":
		return "[" + name + ": " + shorten(pick("", "path", "file_path")) + "]"
	case "bash":
		return formatBash(pick("", "command"))
	case "grep":
		return "[grep: /" + pick("", "pattern") + "/ in " + shorten(pick(".", "path")) + "]"
	case "find":
		return "[find: " + pick("", "pattern") + " in " + shorten(pick(".", "path")) + "]"
	case "ls":
		return "[ls: " + shorten(pick(".", "path")) + "]"
	default:
		js := string(a.raw)
		out := "[" + name + ": " + jsSlice(js, 40)
		if jsLen(js) > 40 {
			out += "..."
		}
		return out + "]"
	}
}

// formatBash is formatToolCall("bash", {command}).
func formatBash(command string) string {
	normalized := normalizePreview(command)
	out := "[bash: " + jsSlice(normalized, 50)
	if jsLen(normalized) > 50 {
		out += "..."
	}
	return out + "]"
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsTruthy is JavaScript truthiness of a JSON value.
func jsTruthy(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case 'n', 'f':
		return false
	case 't', '{', '[':
		return true
	case '"':
		return len(v) > 2
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return (err == nil || math.IsInf(f, 0)) && f != 0
}

// jsString is String(v) for a JSON value.
func jsString(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "undefined"
	}
	switch v[0] {
	case '"':
		s, _ := unquoteFast(v)
		return s
	case '{':
		return "[object Object]"
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) != nil {
			return ""
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			if !isNull(e) {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return jsNumber(f)
}

// jsPrim is a JavaScript primitive after ToPrimitive: a string or a number
// (booleans and null are held as their numbers, with their string forms).
type jsPrim struct {
	isStr bool
	str   string // the string, or the String() form of a non-number
	num   float64
	lit   string // "true", "false", "null" for those literals
}

func toPrimitive(v json.RawMessage) jsPrim {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return jsPrim{num: math.NaN(), lit: "undefined"}
	}
	switch v[0] {
	case '"', '{', '[':
		return jsPrim{isStr: true, str: jsString(v)}
	case 't':
		return jsPrim{num: 1, lit: "true"}
	case 'f':
		return jsPrim{num: 0, lit: "false"}
	case 'n':
		return jsPrim{num: 0, lit: "null"}
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return jsPrim{num: f}
}

func (p jsPrim) String() string {
	switch {
	case p.isStr:
		return p.str
	case p.lit != "":
		return p.lit
	}
	return jsNumber(p.num)
}

// plus is JavaScript's binary + on primitives.
func (p jsPrim) plus(q jsPrim) jsPrim {
	if p.isStr || q.isStr {
		return jsPrim{isStr: true, str: p.String() + q.String()}
	}
	return jsPrim{num: p.number() + q.number()}
}

// number is ToNumber.
func (p jsPrim) number() float64 {
	if !p.isStr {
		return p.num
	}
	return stringToNumber(p.str)
}

// stringToNumber is JavaScript's ToNumber applied to a string.
func stringToNumber(s string) float64 {
	s = jsTrim(s)
	if s == "" {
		return 0
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			f := 0.0
			for _, c := range s[2:] {
				d := -1
				switch {
				case c >= '0' && c <= '9':
					d = int(c - '0')
				case c >= 'a' && c <= 'f':
					d = int(c-'a') + 10
				case c >= 'A' && c <= 'F':
					d = int(c-'A') + 10
				}
				if d < 0 || d >= base {
					return math.NaN()
				}
				f = f*float64(base) + float64(d)
			}
			return f
		}
	}
	if !isDecimalLiteral(s) {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// isDecimalLiteral matches [+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?
func isDecimalLiteral(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		intDigits++
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			fracDigits++
		}
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			expDigits++
		}
		if expDigits == 0 {
			return false
		}
	}
	return i == len(s)
}
