package browse

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way JSON.stringify writes it
// (and jsonx.Marshal): no HTML escaping, U+2028/U+2029 as themselves, short
// escapes for \b \t \n \f \r, \u00XX for other control characters. A lone
// surrogate kept as WTF-8 (see jsSlice) is written as \udXXX; any other
// invalid byte becomes \ufffd, as encoding/json writes it.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain ASCII bytes at a time.
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
				cp := 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
				dst = append(dst, '\\', 'u', hexDigits[cp>>12&0xF], hexDigits[cp>>8&0xF], hexDigits[cp>>4&0xF], hexDigits[cp&0xF])
				i += 3
			} else {
				dst = append(dst, `\ufffd`...)
				i++
			}
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// plain8 reports whether the 8 bytes of b are ASCII that needs no escape
// (no control character, '"' or '\\').
func plain8(b string) bool {
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	// Each term is non-zero when some byte matches (the classic "has a
	// byte less than n" and "has a zero byte" tricks; never a false
	// negative, which is all that matters here).
	ctl := (x - lsb8*0x20) & ^x & msb8
	q := x ^ (lsb8 * '"')
	quote := (q - lsb8) & ^q & msb8
	bs := x ^ (lsb8 * '\\')
	back := (bs - lsb8) & ^bs & msb8
	return (ctl | quote | back | x&msb8) == 0
}

// appendNullableString writes a *string: null for nil.
func appendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

// jsNumber formats f like JavaScript's Number.prototype.toString.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e-07, 1e+21
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsStringify re-encodes a JSON value the way JSON.stringify would write it
// after JSON.parse: compact, strings re-escaped, numbers in JS form, and
// for duplicate keys the first position with the last value. It returns
// raw unchanged when it is not valid JSON.
func jsStringify(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return raw
	}
	if plainCompact(raw) {
		return raw
	}
	v, ok := parseJS(raw)
	if !ok {
		return raw
	}
	return appendJSValue(nil, v)
}

// plainCompact reports whether raw is certainly already in JSON.stringify's
// form (the common case, checked cheaply): no white space outside strings,
// only the escapes JSON.stringify writes, and numbers that are short
// integers. Duplicate keys are not looked for.
func plainCompact(raw []byte) bool {
	inStr := false
	digits := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inStr {
			switch {
			case c == '\\':
				i++
				if i >= len(raw) {
					return false
				}
				switch raw[i] {
				case '"', '\\', 'b', 'f', 'n', 'r', 't':
				case 'u':
					// JSON.stringify writes \u00XX (lower case) only for
					// control characters without a short escape.
					if i+4 >= len(raw) || raw[i+1] != '0' || raw[i+2] != '0' || raw[i+3] > '1' || raw[i+3] < '0' {
						return false
					}
					h := raw[i+4]
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f') {
						return false
					}
					if raw[i+3] == '0' && (h == '8' || h == '9' || h == 'a' || h == 'c' || h == 'd') {
						return false
					}
					i += 4
				default:
					return false
				}
			case c == '"':
				inStr = false
			case c < 0x20:
				return false
			}
			continue
		}
		if c >= '0' && c <= '9' {
			if digits == 0 && c == '0' && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '9' {
				return false
			}
			if c == '0' && digits == 0 && i > 0 && raw[i-1] == '-' {
				return false // -0 is written 0
			}
			digits++
			if digits > 15 {
				return false
			}
			continue
		}
		if digits > 0 && (c == '.' || c == 'e' || c == 'E') {
			return false
		}
		digits = 0
		switch c {
		case '"':
			inStr = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return !inStr
}

// jsValue is a parsed JSON value with object member order kept.
type jsValue struct {
	kind byte // 's' string, 'n' number, 't' true, 'f' false, 'z' null, 'a' array, 'o' object
	str  string
	num  float64
	arr  []jsValue
	keys []string
	vals []jsValue
}

func parseJS(raw []byte) (jsValue, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, ok := parseTokens(dec)
	if !ok {
		return jsValue{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsValue{}, false
	}
	return v, true
}

// parseTokens builds a jsValue from a token stream without recursion.
func parseTokens(dec *json.Decoder) (jsValue, bool) {
	type frame struct {
		v      jsValue
		key    string
		hasKey bool
	}
	var stack []frame
	var root jsValue
	done := false
	put := func(v jsValue) {
		if len(stack) == 0 {
			root, done = v, true
			return
		}
		top := &stack[len(stack)-1]
		if top.v.kind == 'a' {
			top.v.arr = append(top.v.arr, v)
			return
		}
		for i, k := range top.v.keys {
			if k == top.key {
				top.v.vals[i] = v
				top.hasKey = false
				return
			}
		}
		top.v.keys = append(top.v.keys, top.key)
		top.v.vals = append(top.v.vals, v)
		top.hasKey = false
	}
	for !done {
		t, err := dec.Token()
		if err != nil {
			return jsValue{}, false
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.v.kind == 'o' && !top.hasKey {
				if k, ok := t.(string); ok {
					top.key, top.hasKey = k, true
					continue
				}
			}
		}
		switch x := t.(type) {
		case json.Delim:
			switch x {
			case '{':
				stack = append(stack, frame{v: jsValue{kind: 'o'}})
			case '[':
				stack = append(stack, frame{v: jsValue{kind: 'a'}})
			default:
				v := stack[len(stack)-1].v
				stack = stack[:len(stack)-1]
				put(v)
			}
		case string:
			put(jsValue{kind: 's', str: x})
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil && !math.IsInf(f, 0) {
				return jsValue{}, false
			}
			put(jsValue{kind: 'n', num: f})
		case bool:
			if x {
				put(jsValue{kind: 't'})
			} else {
				put(jsValue{kind: 'f'})
			}
		case nil:
			put(jsValue{kind: 'z'})
		}
	}
	return root, true
}

// appendJSValue writes v as JSON.stringify would, without recursion.
func appendJSValue(dst []byte, v jsValue) []byte {
	type frame struct {
		v *jsValue
		i int
	}
	writeScalar := func(dst []byte, v *jsValue) []byte {
		switch v.kind {
		case 's':
			return appendString(dst, v.str)
		case 'n':
			if math.IsInf(v.num, 0) || math.IsNaN(v.num) {
				return append(dst, "null"...)
			}
			return append(dst, jsNumber(v.num)...)
		case 't':
			return append(dst, "true"...)
		case 'f':
			return append(dst, "false"...)
		}
		return append(dst, "null"...)
	}
	if v.kind != 'a' && v.kind != 'o' {
		return writeScalar(dst, &v)
	}
	stack := []frame{{v: &v}}
	if v.kind == 'a' {
		dst = append(dst, '[')
	} else {
		dst = append(dst, '{')
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		var n int
		if top.v.kind == 'a' {
			n = len(top.v.arr)
		} else {
			n = len(top.v.keys)
		}
		if top.i == n {
			if top.v.kind == 'a' {
				dst = append(dst, ']')
			} else {
				dst = append(dst, '}')
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if top.i > 0 {
			dst = append(dst, ',')
		}
		var child *jsValue
		if top.v.kind == 'a' {
			child = &top.v.arr[top.i]
		} else {
			dst = appendString(dst, top.v.keys[top.i])
			dst = append(dst, ':')
			child = &top.v.vals[top.i]
		}
		top.i++
		switch child.kind {
		case 'a':
			dst = append(dst, '[')
			stack = append(stack, frame{v: child})
		case 'o':
			dst = append(dst, '{')
			stack = append(stack, frame{v: child})
		default:
			dst = writeScalar(dst, child)
		}
	}
	return dst
}
