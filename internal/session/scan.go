package session

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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
	i++
	for {
		// Fast scan for the next byte that needs attention.
		for i < len(b) {
			c := b[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		default: // backslash
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(b[k]) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		}
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

// members appends the members of the object obj (which must be a valid JSON
// object, possibly with surrounding whitespace) to dst. ok is false when obj
// is not a valid object.
func members(dst []member, obj []byte) ([]member, bool) {
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

// elements returns the raw elements of the JSON array arr.
func elements(dst [][]byte, arr []byte) ([][]byte, bool) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return dst, false
	}
	i = skipWS(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return dst, true
	}
	for {
		vs := i
		if i = skipValue(arr, i, 1); i < 0 {
			return dst, false
		}
		dst = append(dst, arr[vs:i])
		i = skipWS(arr, i)
		if i >= len(arr) {
			return dst, false
		}
		if arr[i] == ']' {
			return dst, true
		}
		if arr[i] != ',' {
			return dst, false
		}
		i = skipWS(arr, i+1)
	}
}

// unquote decodes a raw JSON string token (with its quotes) exactly as
// encoding/json does.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	simple := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return string(inner), true
	}
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
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
