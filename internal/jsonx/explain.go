package jsonx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Explain describes an encoding/json decoding error of data in plain words
// and returns the byte offset it is about: for a syntax error the
// offending byte (len(data) when the input ends early), for a value of the
// wrong type the start of that value. Errors of other kinds keep their own
// text and offset -1.
func Explain(data []byte, err error) (offset int, msg string) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset)
		if strings.HasPrefix(se.Error(), "unexpected end") || off > len(data) {
			return len(data), "the text ends too early: a {, [ or \" is not closed"
		}
		if off > 0 {
			off-- // Offset counts the offending byte itself.
		}
		return off, explainSyntax(data, off, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return len(data), "the text ends too early: a {, [ or \" is not closed"
	case errors.As(err, &te):
		off := int(te.Offset)
		start := valueStart(data, off, te.Value)
		what := "the value"
		if te.Field != "" {
			what = quoteField(te.Field)
		}
		return start, fmt.Sprintf("%s must be %s, not %s", what, kindOf(te.Type.Kind().String()), article(te.Value))
	}
	return -1, err.Error()
}

// Position converts a byte offset in data to a 1-based line and column
// (the column counts characters).
func Position(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	if offset < 0 {
		offset = 0
	}
	line, start := 1, 0
	for i := 0; i < offset; i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(data[start:offset]) + 1
}

// PlainError is Explain with the position in words: "line 3, column 7:
// expected ',' or '}' after a value, found '\"' (a missing comma?)".
func PlainError(data []byte, err error) string {
	off, msg := Explain(data, err)
	if off < 0 {
		return msg
	}
	line, col := Position(data, off)
	return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
}

// syntaxContexts are the endings of encoding/json's "invalid character"
// messages.
var syntaxContexts = []string{
	"looking for beginning of object key string",
	"after object key:value pair",
	"after object key",
	"after array element",
	"looking for beginning of value",
	"in string literal",
	"in string escape code",
	"after decimal point in numeric literal",
	"in exponent of numeric literal",
	"in numeric literal",
	"after top-level value",
}

func explainSyntax(data []byte, off int, goMsg string) string {
	found := "end of text"
	var c byte
	if off < len(data) {
		c = data[off]
		found = describeByte(c)
	}
	prev := byte(0)
	for i := off - 1; i >= 0; i-- {
		if b := data[i]; b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			prev = b
			break
		}
	}
	rest := goMsg
	for _, ctx := range syntaxContexts {
		if strings.HasPrefix(goMsg, "invalid character ") && strings.HasSuffix(goMsg, " "+ctx) {
			rest = ctx
			break
		}
	}
	if i := strings.Index(goMsg, " in literal "); i >= 0 && rest == goMsg {
		rest = goMsg[i+1:]
	}
	switch {
	case rest == "looking for beginning of object key string":
		switch {
		case c == '}' && prev == ',':
			return "a comma before '}' with no member after it (remove the comma)"
		case c == '\'':
			return "keys need double quotes, not single quotes"
		case comment(data, off):
			return "comments are not allowed in this file"
		}
		return "expected a key in double quotes, found " + found
	case rest == "after object key":
		return "expected ':' after the key, found " + found
	case rest == "after object key:value pair":
		return "expected ',' or '}' after a value, found " + found + " (a missing comma?)"
	case rest == "after array element":
		return "expected ',' or ']' after an array element, found " + found + " (a missing comma?)"
	case rest == "looking for beginning of value":
		switch {
		case (c == ']' || c == '}') && prev == ',':
			return fmt.Sprintf("a comma before '%c' with nothing after it (remove the comma)", c)
		case c == '\'':
			return "strings need double quotes, not single quotes"
		case comment(data, off):
			return "comments are not allowed in this file"
		}
		return "expected a value (a string in double quotes, a number, {, [, true, false or null), found " + found
	case rest == "in string literal":
		return found + " inside a string; write it as an escape (\\n, \\t, \\u0000)"
	case rest == "in string escape code":
		return fmt.Sprintf("\\%c is not an escape JSON knows (use \\\\ for a backslash)", c)
	case strings.HasPrefix(rest, "in literal "):
		word := strings.Fields(strings.TrimPrefix(rest, "in literal "))[0]
		return fmt.Sprintf("expected %s, found %s (true, false and null are written in lower case)", word, found)
	case strings.HasSuffix(rest, "numeric literal"):
		return "a malformed number at " + found
	case rest == "after top-level value":
		return "unexpected " + found + " after the end of the document"
	}
	return goMsg
}

// comment reports whether a // or /* comment starts at off.
func comment(data []byte, off int) bool {
	return off+1 < len(data) && data[off] == '/' && (data[off+1] == '/' || data[off+1] == '*')
}

// describeByte names a byte for a message: 'x', or a word for invisible
// characters.
func describeByte(c byte) string {
	switch c {
	case '\n':
		return "a line break"
	case '\r':
		return "a carriage return"
	case '\t':
		return "a tab"
	case '"':
		return `'"'`
	}
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf("the control character 0x%02x", c)
	}
	if c >= 0x80 {
		return "a non-ASCII character"
	}
	return fmt.Sprintf("'%c'", c)
}

// valueStart finds the first byte of the value a type error is about:
// the decoder's offset is just past the opening bracket of an object or
// array, and just past the end of a string, number or literal.
func valueStart(data []byte, off int, kind string) int {
	if off > len(data) {
		off = len(data)
	}
	if kind == "object" || kind == "array" {
		return max(off-1, 0)
	}
	i := off - 1
	if i >= 0 && data[i] == '"' {
		for j := i - 1; j >= 0; j-- {
			if data[j] != '"' {
				continue
			}
			k := j - 1
			for k >= 0 && data[k] == '\\' {
				k--
			}
			if (j-1-k)%2 == 0 {
				return j
			}
		}
		return 0
	}
	for i > 0 && strings.IndexByte(",:[{ \t\r\n", data[i-1]) < 0 {
		i--
	}
	return max(i, 0)
}

// quoteField names the field of a decoder's path ("providers.models.id"
// is "id"; the line and column say which one).
func quoteField(f string) string {
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		f = f[i+1:]
	}
	return `"` + f + `"`
}

// kindOf names a Go kind as a JSON reader would.
func kindOf(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "a " + kind
}

// article puts "a"/"an" before a decoder's value name ("number", "string",
// "object", "array", "bool", "number 1e400").
func article(v string) string {
	switch {
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "a") || strings.HasPrefix(v, "o"):
		return "an " + v
	}
	return "a " + v
}
