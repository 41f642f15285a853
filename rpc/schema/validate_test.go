package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// validator checks instances against the subset of JSON Schema 2020-12 the
// generator uses. Any other keyword is an error, so that the generator
// cannot drift into keywords nobody checked.
type validator struct {
	root map[string]any
	defs map[string]any
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func newValidator(doc []byte) (*validator, error) {
	v, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	defs, _ := root["$defs"].(map[string]any)
	return &validator{root: root, defs: defs}, nil
}

// validateDef checks a JSON line against $defs/name ("" for the root).
func (v *validator) validateLine(name string, line []byte) error {
	x, err := decodeJSON(line)
	if err != nil {
		return err
	}
	var s any = v.root
	if name != "" {
		s = map[string]any{"$ref": "#/$defs/" + name}
	}
	return v.check(s, x, "$")
}

var annotations = map[string]bool{"description": true, "title": true, "$schema": true, "$defs": true}

func (v *validator) check(s any, x any, path string) error {
	if b, ok := s.(bool); ok {
		if !b {
			return fmt.Errorf("%s: false schema", path)
		}
		return nil
	}
	sm, ok := s.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is not an object", path)
	}
	for k := range sm {
		switch k {
		case "$ref", "type", "const", "enum", "properties", "required", "items", "oneOf", "anyOf", "additionalProperties":
		default:
			if !annotations[k] {
				return fmt.Errorf("%s: unsupported keyword %q", path, k)
			}
		}
	}
	if r, ok := sm["$ref"].(string); ok {
		name, found := strings.CutPrefix(r, "#/$defs/")
		d, ok := v.defs[name]
		if !found || !ok {
			return fmt.Errorf("%s: unresolved $ref %q", path, r)
		}
		if err := v.check(d, x, path); err != nil {
			return err
		}
	}
	if t, ok := sm["type"]; ok {
		var types []string
		switch tt := t.(type) {
		case string:
			types = []string{tt}
		case []any:
			for _, e := range tt {
				types = append(types, e.(string))
			}
		}
		okType := false
		for _, want := range types {
			if typeMatches(want, x) {
				okType = true
			}
		}
		if !okType {
			return fmt.Errorf("%s: expected %s, got %s", path, strings.Join(types, " or "), kindOf(x))
		}
	}
	if c, ok := sm["const"]; ok && !jsonEqual(c, x) {
		return fmt.Errorf("%s: expected %v, got %v", path, c, x)
	}
	if e, ok := sm["enum"].([]any); ok {
		found := false
		for _, c := range e {
			if jsonEqual(c, x) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", path, x, e)
		}
	}
	if obj, isObj := x.(map[string]any); isObj {
		props, _ := sm["properties"].(map[string]any)
		for _, r := range asList(sm["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: missing required member %q", path, r)
			}
		}
		for k, val := range obj {
			if ps, ok := props[k]; ok {
				if err := v.check(ps, val, path+"."+k); err != nil {
					return err
				}
			} else if ap, ok := sm["additionalProperties"]; ok {
				if err := v.check(ap, val, path+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if arr, isArr := x.([]any); isArr {
		if it, ok := sm["items"]; ok {
			for i, e := range arr {
				if err := v.check(it, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	if any := asList(sm["anyOf"]); any != nil {
		var errs []string
		for _, sub := range any {
			err := v.check(sub, x, path)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: matches no anyOf branch: %s", path, strings.Join(errs, "; "))
		}
	}
	if one := asList(sm["oneOf"]); one != nil {
		n := 0
		var errs []string
		for _, sub := range one {
			if err := v.check(sub, x, path); err == nil {
				n++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if n != 1 {
			if n == 0 && len(errs) > 4 {
				errs = errs[:4]
			}
			return fmt.Errorf("%s: matches %d oneOf branches, want 1 (%s)", path, n, strings.Join(errs, "; "))
		}
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func typeMatches(want string, x any) bool {
	switch want {
	case "null":
		return x == nil
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "number":
		_, ok := x.(json.Number)
		return ok
	case "integer":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == float64(int64(f))
	case "array":
		_, ok := x.([]any)
		return ok
	case "object":
		_, ok := x.(map[string]any)
		return ok
	}
	return false
}

func kindOf(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func jsonEqual(a, b any) bool {
	if na, ok := a.(json.Number); ok {
		nb, ok := b.(json.Number)
		if !ok {
			return false
		}
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}
