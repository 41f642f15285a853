package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// A small validating JSON scanner over byte slices. Session files are read
// line by line; every line is checked with it (JSON.parse semantics: any
// whitespace around one value) and the members of objects are visited without
// building intermediate maps. It never allocates except to unescape strings.

const maxDepth = 10000

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the closing quote of the string that
// starts at b[i] == '"', or -1 when it is invalid.
func skipString(b []byte, i int) int {
	e, _ := scanString(b, i)
	return e
}

// scanString is skipString that also reports whether the string is plain:
// ASCII without escapes, so that its bytes are its value.
func scanString(b []byte, i int) (int, bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	plain := true
	i++
	for {
		// 8 bytes at a time while none is a quote, a backslash or a
		// control character.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q := w ^ (lo * '"')
			bs := w ^ (lo * '\\')
			if ((q-lo)&^q|(bs-lo)&^bs|(w-lo*0x20)&^w)&hi != 0 {
				break
			}
			if w&hi != 0 {
				plain = false
			}
			i += 8
		}
		if i >= len(b) {
			return -1, false
		}
		c := b[i]
		if !strSpecial[c] {
			if c >= 0x80 {
				plain = false
			}
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		default: // backslash
			plain = false
			if i+1 >= len(b) {
				return -1, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1, false
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(b[k]) {
						return -1, false
					}
				}
				i += 6
			default:
				return -1, false
			}
		}
	}
}

var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return
}()

// skipStringTrusted finds the end of a string in already validated JSON.
func skipStringTrusted(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipTrusted returns the end of the value at b[i] in already validated
// JSON, without checking it again.
func skipTrusted(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipStringTrusted(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipStringTrusted(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipNumber validates a JSON number at b[i]; -1 when invalid.
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	} else {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipValue returns the index after the value starting at b[i] (no leading
// whitespace), or -1 when it is not valid JSON.
func skipValue(b []byte, i int, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i = skipString(b, i); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			i = skipWS(b, i+1)
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == '}' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == ']' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || isDigit(c):
		return skipNumber(b, i)
	}
	return -1
}

// validJSON reports whether line holds exactly one JSON value (with optional
// surrounding whitespace), like JSON.parse.
func validJSON(line []byte) bool {
	i := skipWS(line, 0)
	if i = skipValue(line, i, 0); i < 0 {
		return false
	}
	return skipWS(line, i) == len(line)
}

// member is one object member: its key (unescaped) and its raw value.
type member struct {
	key string
	val []byte
}

// members appends the members of the object obj to dst. obj must already
// be known to be valid JSON (validJSON); ok is false when it is not an
// object.
func members(dst []member, obj []byte) ([]member, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return dst, false
	}
	i = skipWS(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		ks := i
		i = skipStringTrusted(obj, i)
		key, ok := unquote(obj[ks:i])
		if !ok {
			return dst, false
		}
		i = skipWS(obj, i)
		i = skipWS(obj, i+1) // ':'
		if i >= len(obj) {
			return dst, false
		}
		vs := i
		i = skipTrusted(obj, i)
		dst = append(dst, member{key, obj[vs:i]})
		i = skipWS(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
	return dst, i < len(obj)
}

// membersChecked is members for input that has not been validated: it
// validates every value while splitting, and fails unless obj is exactly
// one valid JSON object (with optional surrounding whitespace).
func membersChecked(dst []member, obj []byte) ([]member, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return dst, false
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return dst, skipWS(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return dst, false
		}
		ks := i
		if i = skipString(obj, i); i < 0 {
			return dst, false
		}
		key, ok := unquote(obj[ks:i])
		if !ok {
			return dst, false
		}
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != ':' {
			return dst, false
		}
		i = skipWS(obj, i+1)
		vs := i
		if i = skipValue(obj, i, 1); i < 0 {
			return dst, false
		}
		dst = append(dst, member{key, obj[vs:i]})
		i = skipWS(obj, i)
		if i >= len(obj) {
			return dst, false
		}
		if obj[i] == '}' {
			return dst, skipWS(obj, i+1) == len(obj)
		}
		if obj[i] != ',' {
			return dst, false
		}
		i = skipWS(obj, i+1)
	}
}

// elements returns the raw elements of the (validated) JSON array arr.
func elements(dst [][]byte, arr []byte) ([][]byte, bool) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return dst, false
	}
	i = skipWS(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		vs := i
		i = skipTrusted(arr, i)
		dst = append(dst, arr[vs:i])
		i = skipWS(arr, i)
		if i < len(arr) && arr[i] == ',' {
			i = skipWS(arr, i+1)
		}
	}
	return dst, i < len(arr)
}

// unquote decodes a raw JSON string token (with its quotes) exactly as
// encoding/json does. Common escapes are handled here; \u surrogates and
// invalid UTF-8 go through encoding/json.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	bs := bytes.IndexByte(inner, '\\')
	if !utf8.Valid(inner) {
		return unquoteSlow(raw)
	}
	if bs < 0 {
		return alias(inner), true
	}
	out := make([]byte, 0, len(inner))
	out = append(out, inner[:bs]...)
	for i := bs; i < len(inner); {
		c := inner[i]
		if c != '\\' {
			j := bytes.IndexByte(inner[i:], '\\')
			if j < 0 {
				out = append(out, inner[i:]...)
				break
			}
			out = append(out, inner[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(inner) {
			return unquoteSlow(raw)
		}
		switch inner[i+1] {
		case '"', '\\', '/':
			out = append(out, inner[i+1])
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
			if i+6 > len(inner) {
				return unquoteSlow(raw)
			}
			v, err := strconv.ParseUint(string(inner[i+2:i+6]), 16, 32)
			if err != nil || (v >= 0xd800 && v < 0xe000) {
				return unquoteSlow(raw)
			}
			out = utf8.AppendRune(out, rune(v))
			i += 6
			continue
		default:
			return unquoteSlow(raw)
		}
		i += 2
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), true
}

// alias returns b as a string without copying. Everything decoded from a
// session file aliases the file's buffer, which is never modified (it is
// also what Entry.Raw points into); callers that reuse a buffer must
// strings.Clone what they keep.
func alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func unquoteSlow(raw []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// str decodes val when it is a JSON string.
func str(val []byte) (string, bool) {
	if len(val) == 0 || val[0] != '"' {
		return "", false
	}
	return unquote(val)
}

func isNull(val []byte) bool { return string(val) == "null" }
