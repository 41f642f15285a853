package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Restringify is what JavaScript's JSON.stringify(JSON.parse(raw)) gives:
// compact, object members in their order, numbers and strings written as
// JavaScript writes them (2.50 → 2.5, 1e21 → 1e+21, "\u00e9" → "é"). It
// is an error when raw is not one JSON value.
func Restringify(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out := make([]byte, 0, len(raw))
	// Per open container: whether it is an object, and whether the next
	// token of an object is a key.
	type level struct{ object, key, first bool }
	var stack []level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(stack) == 0 && len(out) > 0 {
			return nil, errors.New("jsonx: more than one JSON value")
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if !top.first && (!top.object || top.key) {
				out = append(out, ',')
			}
			top.first = false
			if top.object && top.key {
				out = AppendString(out, tok.(string))
				out = append(out, ':')
				top.key = false
				continue
			}
			if top.object {
				top.key = true
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, byte(v))
			stack = append(stack, level{object: v == '{', key: v == '{', first: true})
			continue
		case string:
			out = AppendString(out, v)
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return nil, err
			}
			if out, err = AppendFloat(out, f); err != nil {
				return nil, err
			}
		case bool:
			out = AppendBool(out, v)
		case nil:
			out = append(out, "null"...)
		}
	}
	if len(stack) > 0 || len(out) == 0 {
		return nil, errors.New("jsonx: incomplete JSON value")
	}
	return out, nil
}
