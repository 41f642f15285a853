package rpcmode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// decode unmarshals a validated command line into v.
//
// encoding/json copies a string twice (unescaped bytes, then the string):
// a 50 MB prompt cost 100 MB more than its text. So long strings are
// decoded here, once each, straight into their string: the line is
// unmarshalled with each long string replaced by a short placeholder, and
// the placeholders are then swapped for the strings in v. When a long
// string lands anywhere else than a string field (raw JSON, an interface,
// a member v does not have), the line is unmarshalled as it is.
func decode(line []byte, v any) error {
	if err := decodeLong(line, v); err != nil {
		return fmt.Errorf("Invalid command: %v", err)
	}
	return nil
}

func decodeLong(line []byte, v any) error {
	if len(line) < longStringMin {
		return json.Unmarshal(line, v)
	}
	spans := longStringSpans(line)
	if len(spans) == 0 {
		return json.Unmarshal(line, v)
	}
	var small bytes.Buffer
	prefix := "pisces-long-" + strconv.FormatInt(int64(len(line)), 36) + "-"
	repl := make(map[string][2]int, len(spans))
	last := 0
	for k, sp := range spans {
		small.Write(line[last:sp[0]])
		ph := prefix + strconv.Itoa(k)
		small.WriteString(`"` + ph + `"`)
		repl[ph] = sp
		last = sp[1]
	}
	small.Write(line[last:])
	if bytes.Contains(line, []byte(prefix)) {
		// The text itself holds a placeholder: do not guess.
		return json.Unmarshal(line, v)
	}
	if err := json.Unmarshal(small.Bytes(), v); err != nil {
		return json.Unmarshal(line, v) // the error names the real input
	}
	rv := reflect.ValueOf(v)
	if n := countPlaceholders(rv, repl); n != len(spans) {
		return json.Unmarshal(line, v)
	}
	total := 0
	setPlaceholders(rv, func(ph string) (string, bool) {
		sp, ok := repl[ph]
		if !ok {
			return "", false
		}
		total += sp[1] - sp[0]
		return unquote(line[sp[0]:sp[1]]), true
	})
	if total >= collectAfter {
		// The line (and the reader's pieces of it) are garbage from here:
		// nothing refers to them once this returns. A collection now lets
		// what the command goes on to allocate (its session entry, say)
		// reuse their memory; otherwise the heap, whose goal the line and
		// its pieces have doubled, would grow by all of that first (a
		// 50 MB prompt peaked 50 MB higher). It costs a mark of the heap's
		// pointers, not of the text, which holds none.
		runtime.GC()
	}
	return nil
}

// collectAfter is the size of long strings in one command from which
// decode collects garbage before returning.
const collectAfter = 4 << 20

// longStringSpans returns the byte ranges of the string values (not
// member names) of at least longStringMin bytes in valid JSON.
func longStringSpans(line []byte) [][2]int {
	var spans [][2]int
	p := lightParser{b: line}
	var walk func()
	walk = func() {
		p.ws()
		switch p.b[p.i] {
		case '{':
			p.i++
			p.ws()
			if p.b[p.i] == '}' {
				p.i++
				return
			}
			for {
				p.ws()
				p.i = p.stringEnd()
				p.ws()
				p.i++ // ':'
				walk()
				p.ws()
				c := p.b[p.i]
				p.i++
				if c != ',' {
					return
				}
			}
		case '[':
			p.i++
			p.ws()
			if p.b[p.i] == ']' {
				p.i++
				return
			}
			for {
				walk()
				p.ws()
				c := p.b[p.i]
				p.i++
				if c != ',' {
					return
				}
			}
		case '"':
			end := p.stringEnd()
			if end-p.i >= longStringMin {
				spans = append(spans, [2]int{p.i, end})
			}
			p.i = end
		default:
			p.value(false)
		}
	}
	walk()
	return spans
}

// countPlaceholders counts the string fields of v holding a placeholder.
func countPlaceholders(v reflect.Value, repl map[string][2]int) int {
	n := 0
	setPlaceholders(v, func(ph string) (string, bool) {
		if _, ok := repl[ph]; ok {
			n++
		}
		return "", false
	})
	return n
}

// setPlaceholders calls get for every settable string in v and stores what
// it returns when ok.
func setPlaceholders(v reflect.Value, get func(string) (string, bool)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setPlaceholders(v.Elem(), get)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				setPlaceholders(v.Field(i), get)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			setPlaceholders(v.Index(i), get)
		}
	case reflect.String:
		if s, ok := get(v.String()); ok && v.CanSet() {
			v.SetString(s)
		}
	}
}

// unquote decodes a valid JSON string literal as encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD), into one allocation.
func unquote(raw []byte) string {
	s := raw[1 : len(raw)-1]
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch e := s[i]; e {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r := hex4(s[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						if d := utf16.DecodeRune(r, hex4(s[i+3:])); d != unicode.ReplacementChar {
							sb.WriteRune(d)
							i += 7
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				sb.WriteRune(r)
			default: // '"', '\\', '/'
				sb.WriteByte(e)
			}
			i++
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			sb.Write(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.Write(s[i : i+size])
			}
			i += size
		}
	}
	return sb.String()
}

// hex4 reads four hex digits (valid JSON has them), or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
