package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
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
//
// Short strings (keys, ids, timestamps) are checked 8 bytes at a time.
// Once a string is longer than 16 bytes, scanLong takes over: it finds the
// closing quote and the next backslash with bytes.IndexByte (vector
// instructions) and only checks the bytes in between for control
// characters, so a long text costs well under a cycle per byte.
func scanString(b []byte, i int) (int, bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	start := i
	plain := true
	i++
	for {
		// 8 bytes at a time while none is a quote, a backslash or a
		// control character; then straight to the first one that is (the
		// lowest flagged byte is always a true match).
		for i+8 <= len(b) {
			if i-start > 32 {
				return scanLong(b, i, plain)
			}
			w := binary.LittleEndian.Uint64(b[i:])
			q := w ^ (lo * '"')
			bs := w ^ (lo * '\\')
			if m := ((q-lo)&^q | (bs-lo)&^bs | (w-lo*0x20)&^w) & hi; m != 0 {
				k := uint(bits.TrailingZeros64(m)) &^ 7
				if w&hi&(1<<k-1) != 0 {
					plain = false
				}
				i += int(k >> 3)
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
			n := escapeLen(b, i)
			if n < 0 {
				return -1, false
			}
			i += n
		}
	}
}

// escapeLen returns the length of the valid escape sequence at b[i] ==
// '\\', or -1.
func escapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if i+6 > len(b) {
			return -1
		}
		for k := i + 2; k < i+6; k++ {
			if !isHex(b[k]) {
				return -1
			}
		}
		return 6
	}
	return -1
}

// scanLong continues scanString from b[i] (inside the string).
func scanLong(b []byte, i int, plain bool) (int, bool) {
	q := -1 // the next quote at or after i, -1 when not searched yet
	for {
		if q < i {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return -1, false
			}
			q = i + k
		}
		end := q
		k := bytes.IndexByte(b[i:q], '\\')
		if k >= 0 {
			end = i + k
		}
		ok, ascii := checkText(b[i:end])
		if !ok {
			return -1, false
		}
		plain = plain && ascii
		if k < 0 {
			return q + 1, plain
		}
		plain = false
		n := escapeLen(b, end)
		if n < 0 {
			return -1, false
		}
		i = end + n // past q when the quote was escaped: searched again
	}
}

// checkText reports whether s holds no control character, and whether it
// is all ASCII.
func checkText(s []byte) (ok, ascii bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	var ctl, high uint64
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w0 := binary.LittleEndian.Uint64(s[i:])
		w1 := binary.LittleEndian.Uint64(s[i+8:])
		w2 := binary.LittleEndian.Uint64(s[i+16:])
		w3 := binary.LittleEndian.Uint64(s[i+24:])
		ctl |= (w0-lo*0x20)&^w0 | (w1-lo*0x20)&^w1 | (w2-lo*0x20)&^w2 | (w3-lo*0x20)&^w3
		high |= w0 | w1 | w2 | w3
	}
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		ctl |= (w - lo*0x20) &^ w
		high |= w
	}
	for ; i < len(s); i++ {
		c := uint64(s[i])
		if c < 0x20 {
			ctl |= hi
		}
		high |= c
	}
	return ctl&hi == 0, high&hi == 0
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
// When the value is a string that was decoded while it was scanned, isStr
// is set and str holds it.
type member struct {
	key   string
	val   []byte
	str   string
	isStr bool
}

// string returns the member's value when it is a JSON string.
func (m *member) string() (string, bool) {
	if m.isStr {
		return m.str, true
	}
	return str(m.val)
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
		dst = append(dst, member{key: key, val: obj[vs:i]})
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
		dst = append(dst, member{key: key, val: obj[vs:i]})
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
	return unquoteInner(raw[1 : len(raw)-1])
}

// unquoteInner is unquote of the inside of a JSON string token.
func unquoteInner(inner []byte) (string, bool) {
	bs := bytes.IndexByte(inner, '\\')
	if !utf8.Valid(inner) {
		return unquoteSlowInner(inner)
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
			return unquoteSlowInner(inner)
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
				return unquoteSlowInner(inner)
			}
			v, err := strconv.ParseUint(string(inner[i+2:i+6]), 16, 32)
			if err != nil || (v >= 0xd800 && v < 0xe000) {
				return unquoteSlowInner(inner)
			}
			out = utf8.AppendRune(out, rune(v))
			i += 6
			continue
		default:
			return unquoteSlowInner(inner)
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

func unquoteSlowInner(inner []byte) (string, bool) {
	raw := make([]byte, 0, len(inner)+2)
	raw = append(append(append(raw, '"'), inner...), '"')
	return unquoteSlow(raw)
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
