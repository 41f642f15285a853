package browse

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// appendString appends s as a JSON string the way JSON.stringify writes it
// (and jsonx.Marshal): no HTML escaping, U+2028/U+2029 as themselves, short
// escapes for \b \t \n \f \r, \u00XX for other control characters. A lone
// surrogate kept as WTF-8 (see jsSlice) is written as \udXXX; any other
// invalid byte becomes \ufffd, as encoding/json writes it.
func appendString(dst []byte, s string) []byte { return jsonx.AppendStringWTF8(dst, s) }

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
