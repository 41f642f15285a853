package rpcmode

import (
	"encoding/json"
	"fmt"
)

// A command line is read twice: once here, to find its id and type and to
// check its fields, and once by its handler, into the command's struct. A
// prompt can be tens of megabytes; this first reading copies none of it:
// the line is checked with json.Valid (no allocation) and walked in place,
// and a long string becomes a longString (its length) instead of a copy.

// longStringMin is the length (of its JSON text) from which a string
// member is not copied by the envelope reading.
const longStringMin = 64 << 10

// longString stands for a long JSON string that was not decoded: the
// length of its JSON text.
type longString int

// parseCommandObject decodes a line holding exactly one JSON object as
// json.Decoder with UseNumber would into map[string]any, except that long
// strings (other than the top-level "id" and "type") are longString. ok is
// false when the line is not one valid JSON object: the caller then takes
// the decoder's path, which words the error.
func parseCommandObject(line []byte) (obj map[string]any, ok bool) {
	if !json.Valid(line) {
		return nil, false
	}
	p := lightParser{b: line}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, false
	}
	obj, ok = p.value(true).(map[string]any)
	return obj, ok
}

// lightParser walks JSON that json.Valid accepted.
type lightParser struct {
	b []byte
	i int
}

func (p *lightParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the value at p.i; top says it is the line's object (whose
// "id" and "type" are always decoded).
func (p *lightParser) value(top bool) any {
	p.ws()
	switch c := p.b[p.i]; c {
	case '{':
		p.i++
		obj := map[string]any{}
		p.ws()
		if p.b[p.i] == '}' {
			p.i++
			return obj
		}
		for {
			p.ws()
			key := p.shortString(p.stringEnd())
			p.ws()
			p.i++ // ':'
			p.ws()
			if top && (key == "id" || key == "type") && p.b[p.i] == '"' {
				obj[key] = p.shortString(p.stringEnd())
			} else {
				obj[key] = p.value(false)
			}
			p.ws()
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // '}'
			return obj
		}
	case '[':
		p.i++
		arr := []any{}
		p.ws()
		if p.b[p.i] == ']' {
			p.i++
			return arr
		}
		for {
			arr = append(arr, p.value(false))
			p.ws()
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // ']'
			return arr
		}
	case '"':
		end := p.stringEnd()
		if end-p.i >= longStringMin {
			n := end - p.i
			p.i = end
			return longString(n)
		}
		return p.shortString(end)
	case 't':
		p.i += 4
		return true
	case 'f':
		p.i += 5
		return false
	case 'n':
		p.i += 4
		return nil
	default:
		start := p.i
		for p.i < len(p.b) && isNumberByte(p.b[p.i]) {
			p.i++
		}
		return json.Number(p.b[start:p.i])
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// stringEnd returns the index just past the string starting at p.i.
func (p *lightParser) stringEnd() int {
	for j := p.i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(p.b)
}

// shortString decodes the string from p.i to end and moves past it.
func (p *lightParser) shortString(end int) string {
	raw := p.b[p.i:end]
	p.i = end
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		// Unreachable for valid JSON; keep the text rather than panic.
		return string(raw)
	}
	return s
}

// isString reports whether a member decoded by parseCommandObject (or
// encoding/json) is a string.
func isString(v any) bool {
	switch v.(type) {
	case string, longString:
		return true
	}
	return false
}

// quoted is a string member for an error message (%q of a short one).
func quoted(v any) string {
	if n, ok := v.(longString); ok {
		return fmt.Sprintf("a string of %d bytes", int(n))
	}
	return fmt.Sprintf("%q", v)
}
