// Package jsonx encodes JSON the way JavaScript's JSON.stringify does (no
// escaping of <, >, &, U+2028 or U+2029) and keeps unknown object fields, in
// their original order, across a decode/encode round trip.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Marshal encodes v like JSON.stringify: no HTML escaping and U+2028/U+2029
// written as themselves. The result has no trailing newline.
//
// A value that is a json.Marshaler (an Appender, most often) is encoded
// without reflection: its output is used as it is when it is already
// compact and valid, which is what encoding/json would make of it;
// anything else goes through MarshalReflect.
func Marshal(v any) ([]byte, error) {
	if b, ok := marshalDirect(v); ok {
		return b, nil
	}
	return MarshalReflect(v)
}

// marshalDirect encodes a Marshaler or Appender without encoding/json.
func marshalDirect(v any) ([]byte, bool) {
	var b []byte
	var err error
	fresh := false
	switch m := v.(type) {
	case Appender:
		if isNilPointer(v) {
			return nil, false
		}
		b, err = m.AppendJSON(nil)
		fresh = true
	case json.Marshaler:
		if isNilPointer(v) {
			return nil, false
		}
		b, err = m.MarshalJSON()
	default:
		return nil, false
	}
	if err != nil || !isCompactJSON(b) {
		return nil, false
	}
	if !bytes.Contains(b, []byte(`\u202`)) {
		if !fresh {
			b = append([]byte(nil), b...)
		}
		return b, true
	}
	return unescapeLineSeparators(b), true
}

// AppendWith appends Marshal(v) to dst, where appendJSON appends v's own
// encoding (a hand-written encoder of v) to a slice. Its output is checked
// as Marshal checks an Appender's; when it fails or is not compact JSON, v
// is encoded by Marshal and copied. The encoder writes into dst's spare
// capacity, so a reused buffer makes this allocation-free.
func AppendWith(dst []byte, v any, appendJSON func([]byte) ([]byte, error)) ([]byte, error) {
	n := len(dst)
	if b, err := appendJSON(dst); err == nil && isCompactJSON(b[n:]) {
		if !bytes.Contains(b[n:], []byte(`\u202`)) {
			return b, nil
		}
		return append(b[:n], unescapeLineSeparators(b[n:])...), nil
	}
	b, err := Marshal(v)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

// isNilPointer reports whether v holds a nil pointer (encoding/json writes
// null for it without calling its methods).
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// MarshalReflect is Marshal through encoding/json (the reference
// implementation; Marshal gives the same bytes and errors).
func MarshalReflect(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	b = b[:len(b)-1] // Encode always appends '\n'
	return unescapeLineSeparators(b), nil
}

// MustMarshal is Marshal for values that cannot fail to encode.
func MustMarshal(v any) []byte {
	b, err := Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// unescapeLineSeparators turns the \u2028 and \u2029 escapes that
// encoding/json always writes back into the raw characters. An escape is only
// rewritten when its backslash is not itself escaped.
func unescapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+5 < len(b) && b[i+1] == 'u' && b[i+2] == '2' && b[i+3] == '0' && b[i+4] == '2' && (b[i+5] == '8' || b[i+5] == '9') {
			if b[i+5] == '8' {
				out = append(out, "\u2028"...)
			} else {
				out = append(out, "\u2029"...)
			}
			i += 5
			continue
		}
		// Any other escape: copy the backslash and the escaped byte together.
		out = append(out, c)
		if i+1 < len(b) {
			i++
			out = append(out, b[i])
		}
	}
	return out
}

// Field is one object member kept verbatim.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Extra holds object members a type does not declare, in input order.
type Extra []Field

// Get returns the raw value of key, if present.
func (e Extra) Get(key string) (json.RawMessage, bool) {
	for _, f := range e {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// MarshalObject encodes v (a struct, usually an alias type without methods)
// and appends the extra members before the closing brace.
func MarshalObject(v any, extra Extra) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("jsonx: %T did not encode as an object", v)
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + 64*len(extra))
	buf.Write(b[:len(b)-1])
	first := len(b) == 2
	for _, f := range extra {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		k, _ := Marshal(f.Key)
		buf.Write(k)
		buf.WriteByte(':')
		var c bytes.Buffer
		if err := json.Compact(&c, f.Value); err != nil {
			return nil, fmt.Errorf("jsonx: field %q: %w", f.Key, err)
		}
		buf.Write(c.Bytes())
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalObject decodes data into v (a pointer to a struct, usually an
// alias type without methods) and returns the members v does not declare.
func UnmarshalObject(data []byte, v any) (Extra, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	known := KnownKeys(reflect.TypeOf(v).Elem())
	return collectExtra(data, known)
}

// collectExtra walks the top-level members of an object and keeps the ones
// whose key is not in known.
func collectExtra(data []byte, known map[string]bool) (Extra, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("jsonx: expected an object")
	}
	var extra Extra
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if !known[key] {
			extra = append(extra, Field{Key: key, Value: append(json.RawMessage(nil), raw...)})
		}
	}
	return extra, nil
}

var knownCache sync.Map // reflect.Type -> map[string]bool

// KnownKeys returns the JSON member names a struct type declares.
func KnownKeys(t reflect.Type) map[string]bool {
	if m, ok := knownCache.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	addKnown(t, m)
	knownCache.Store(t, m)
	return m
}

func addKnown(t reflect.Type, m map[string]bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addKnown(ft, m)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = true
	}
}
