package jsonx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// Append-style encoding: hand-written encoders (no reflection) append their
// JSON to a byte slice with the helpers below and produce exactly the bytes
// Marshal would produce for the same value: strings escaped as encoding/json
// escapes them without HTML escaping and with U+2028/U+2029 left raw,
// numbers formatted as encoding/json formats them (the ES6 rules), raw JSON
// compacted. On any error (NaN, invalid raw JSON) the caller should fall
// back to its reflective encoder, which reports the error as before.

// Appender is implemented by types with a hand-written encoder. AppendJSON
// appends the same bytes Marshal(v) returns.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// errUnsupported is returned by the append helpers for values the
// reflective encoder rejects; callers fall back to it for the exact error.
var errUnsupported = errors.New("jsonx: unsupported value")

// safeASCII marks the ASCII bytes a JSON string holds unescaped.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, as Marshal(s) writes it.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// AppendStringWTF8 is AppendString, except that a lone UTF-16 surrogate
// kept as its WTF-8 bytes (0xED 0xA0..0xBF xx, what a cut between the
// halves of a surrogate pair leaves) is written as \udXXX, as
// JSON.stringify writes a lone surrogate; other invalid bytes still become
// \ufffd.
func AppendStringWTF8(dst []byte, s string) []byte { return appendString(dst, s, true) }

func appendString(dst []byte, s string, wtf8 bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i += plainLen(s[i:])
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
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
			if wtf8 && c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
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
		// U+2028 and U+2029 stay raw (JSON.stringify).
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainLen returns the length of the longest prefix of s, in whole 8-byte
// words, of ASCII that a JSON string holds unescaped (no control
// character, '"' or '\\'): long texts are mostly that, and a word is
// checked at once.
func plainLen(s string) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	// A word flags when a byte is < 0x20, >= 0x80, '"' or '\\' (the "has
	// a byte less than n" and "has a zero byte" tricks; a flagged word may
	// be a false alarm only when another byte of it really matches, which
	// the byte-wise path then handles).
	bad := func(w uint64) uint64 {
		q := w ^ (lo * '"')
		b := w ^ (lo * '\\')
		return ((w - lo*0x20) | (q - lo) | (b - lo) | w) & hi
	}
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w0 := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		w1 := binary.LittleEndian.Uint64([]byte(s[i+8 : i+16]))
		w2 := binary.LittleEndian.Uint64([]byte(s[i+16 : i+24]))
		w3 := binary.LittleEndian.Uint64([]byte(s[i+24 : i+32]))
		if bad(w0)|bad(w1)|bad(w2)|bad(w3) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if bad(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) != 0 {
			break
		}
	}
	return i
}

// PlainASCII reports whether s can be written between quotes as it is (it
// is all ASCII that a JSON string holds unescaped).
func PlainASCII(s string) bool {
	for i := plainLen(s); i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !safeASCII[c] {
			return false
		}
	}
	return true
}

// AppendInt appends an integer.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// AppendBool appends true or false.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// AppendFloat appends a float64 as encoding/json formats it (like JS for
// every finite value). NaN and infinities are an error.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errUnsupported
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// AppendRaw appends raw JSON as Marshal writes a json.RawMessage member:
// compacted (an error when it is not valid JSON) and with \u2028/\u2029
// escapes turned into the raw characters.
func AppendRaw(dst []byte, raw []byte) ([]byte, error) {
	start := len(dst)
	if isCompactJSON(raw) {
		dst = append(dst, raw...)
	} else {
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, raw); err != nil {
			return dst[:start], err
		}
		dst = buf.Bytes()
	}
	return unescapeSeparatorsFrom(dst, start), nil
}

// AppendExtra appends the members of extra as MarshalObject does, before the
// object's closing brace (which the caller writes). first reports whether
// the object has no members yet.
func AppendExtra(dst []byte, extra Extra, first bool) ([]byte, error) {
	var err error
	for _, f := range extra {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, f.Key)
		dst = append(dst, ':')
		if dst, err = AppendRaw(dst, f.Value); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// unescapeSeparatorsFrom applies unescapeLineSeparators to dst[start:]
// (which must begin at a JSON value boundary).
func unescapeSeparatorsFrom(dst []byte, start int) []byte {
	tail := dst[start:]
	if !bytes.Contains(tail, []byte(`\u202`)) {
		return dst
	}
	u := unescapeLineSeparators(tail)
	return append(dst[:start], u...)
}

// isCompactJSON reports whether b is exactly one valid JSON value with no
// insignificant whitespace, i.e. whether json.Compact(b) would return b
// unchanged and without error. It accepts a subset of what encoding/json
// accepts (very deep nesting is left to encoding/json).
func isCompactJSON(b []byte) bool {
	v := validator{b: b}
	return v.value(0) && v.i == len(b)
}

type validator struct {
	b []byte
	i int
}

const maxCompactDepth = 1000

func (v *validator) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		if depth >= maxCompactDepth {
			return false
		}
		v.i++
		if v.i < len(v.b) && v.b[v.i] == '}' {
			v.i++
			return true
		}
		for {
			if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
				return false
			}
			if v.i >= len(v.b) || v.b[v.i] != ':' {
				return false
			}
			v.i++
			if !v.value(depth + 1) {
				return false
			}
			if v.i >= len(v.b) {
				return false
			}
			switch v.b[v.i] {
			case ',':
				v.i++
			case '}':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		if depth >= maxCompactDepth {
			return false
		}
		v.i++
		if v.i < len(v.b) && v.b[v.i] == ']' {
			v.i++
			return true
		}
		for {
			if !v.value(depth + 1) {
				return false
			}
			if v.i >= len(v.b) {
				return false
			}
			switch v.b[v.i] {
			case ',':
				v.i++
			case ']':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return v.lit("true")
	case c == 'f':
		return v.lit("false")
	case c == 'n':
		return v.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return v.num()
	}
	return false
}

func (v *validator) lit(s string) bool {
	if len(v.b)-v.i < len(s) || string(v.b[v.i:v.i+len(s)]) != s {
		return false
	}
	v.i += len(s)
	return true
}

func (v *validator) digits() bool {
	n := 0
	for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
		v.i++
		n++
	}
	return n > 0
}

func (v *validator) num() bool {
	b := v.b
	if b[v.i] == '-' {
		v.i++
	}
	if v.i >= len(b) {
		return false
	}
	if b[v.i] == '0' {
		v.i++
	} else if !v.digits() {
		return false
	}
	if v.i < len(b) && b[v.i] == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(b) && (b[v.i] == 'e' || b[v.i] == 'E') {
		v.i++
		if v.i < len(b) && (b[v.i] == '+' || b[v.i] == '-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// str checks a string starting at the opening quote. Bytes from 0x20 up,
// invalid UTF-8 included, are accepted as encoding/json accepts them.
func (v *validator) str() bool {
	b := v.b
	i := v.i + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// AppendRawMessage appends a json.RawMessage member as encoding/json writes
// it: nil is null, anything else as AppendRaw.
func AppendRawMessage(dst []byte, m json.RawMessage) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	return AppendRaw(dst, m)
}
