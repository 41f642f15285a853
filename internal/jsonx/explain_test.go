package jsonx

import (
	"encoding/json"
	"testing"
)

func TestPlainError(t *testing.T) {
	type target struct {
		Key  string         `json:"key"`
		N    int            `json:"n"`
		On   bool           `json:"on"`
		List []string       `json:"list"`
		Map  map[string]int `json:"map"`
	}
	for _, c := range []struct{ in, want string }{
		{"{\n  \"a\": 1,\n}", `line 3, column 1: a comma before '}' with no member after it (remove the comma)`},
		{`{"a": [1, 2,]}`, `line 1, column 13: a comma before ']' with nothing after it (remove the comma)`},
		{`{"a" 1}`, `line 1, column 6: expected ':' after the key, found '1'`},
		{"{\"a\": 1\n \"b\": 2}", `line 2, column 2: expected ',' or '}' after a value, found '"' (a missing comma?)`},
		{`["a" "b"]`, `line 1, column 6: expected ',' or ']' after an array element, found '"' (a missing comma?)`},
		{`{'a': 1}`, `line 1, column 2: keys need double quotes, not single quotes`},
		{`{a: 1}`, `line 1, column 2: expected a key in double quotes, found 'a'`},
		{`{"a": 'x'}`, `line 1, column 7: strings need double quotes, not single quotes`},
		{"// note\n{}", `line 1, column 1: comments are not allowed in this file`},
		{`{"a": /* x */ 1}`, `line 1, column 7: comments are not allowed in this file`},
		{`{"a": / 1}`, `line 1, column 7: expected a value (a string in double quotes, a number, {, [, true, false or null), found '/'`},
		{`{"a": tru}`, `line 1, column 10: expected true, found '}' (true, false and null are written in lower case)`},
		{`{"a": True}`, `line 1, column 7: expected a value (a string in double quotes, a number, {, [, true, false or null), found 'T'`},
		{"{\"a\": \"x\ny\"}", `line 1, column 9: a line break inside a string; write it as an escape (\n, \t, \u0000)`},
		{`{"a": "\q"}`, `line 1, column 9: \q is not an escape JSON knows (use \\ for a backslash)`},
		{`{"a": 1.}`, `line 1, column 9: a malformed number at '}'`},
		{`{"a": 1} x`, `line 1, column 10: unexpected 'x' after the end of the document`},
		{"{\"a\": [1,\n", `line 2, column 1: the text ends too early: a {, [ or " is not closed`},
		{`{"key": 5}`, `line 1, column 9: "key" must be a string, not a number`},
		{"{\n \"n\": \"x\"}", `line 2, column 7: "n" must be a whole number, not a string`},
		{`{"on": "yes"}`, `line 1, column 8: "on" must be true or false, not a string`},
		{`{"list": {"a": 1}}`, `line 1, column 10: "list" must be an array, not an object`},
		{`{"map": [1]}`, `line 1, column 9: "map" must be an object, not an array`},
		{`{"list": ["a", 2]}`, `line 1, column 16: "list" must be a string, not a number`},
		{`{"key": "say \"hi\"", "n": true}`, `line 1, column 28: "n" must be a whole number, not true or false`},
		{`[1]`, `line 1, column 1: the value must be an object, not an array`},
		{`{"map": {"a": "x"}}`, `line 1, column 15: "map" must be a whole number, not a string`},
	} {
		var v target
		err := json.Unmarshal([]byte(c.in), &v)
		if err == nil {
			t.Errorf("%q: no error", c.in)
			continue
		}
		if got := PlainError([]byte(c.in), err); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s\n(Go: %v)", c.in, got, c.want, err)
		}
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncdé\nf")
	for _, c := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {7, 2, 4}, {8, 3, 1}, {100, 3, 2}, {-1, 1, 1}} {
		if l, col := Position(data, c.off); l != c.line || col != c.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}
