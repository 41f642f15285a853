package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// FileError reports a settings file that could not be parsed. Line and
// Column are 1-based; Column counts characters, not bytes.
type FileError struct {
	Path   string
	Line   int
	Column int
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s: line %d, column %d: %v", e.Path, e.Line, e.Column, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// syntaxError is a parse failure at a byte offset of the original input.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return e.msg }

// parseObject parses data as JSON with comments (// and /* */) and trailing
// commas, and returns its top-level object. An empty or blank input is an
// empty object. Numbers are kept as json.Number so that integers survive a
// round trip unchanged.
func parseObject(data []byte) (map[string]any, error) {
	clean, err := standardize(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, decodeError(clean, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &syntaxError{offset: firstNonSpace(clean), msg: "settings must be a JSON object"}
	}
	if end := int(dec.InputOffset()); firstNonSpace(clean[end:]) < len(clean)-end {
		return nil, &syntaxError{offset: end + firstNonSpace(clean[end:]), msg: "unexpected content after the settings object"}
	}
	return obj, nil
}

// decodeError describes a decoding error of data (comments already
// blanked out) in plain words, at the offset it is about.
func decodeError(data []byte, err error) error {
	off, msg := jsonx.Explain(data, err)
	return &syntaxError{offset: max(off, 0), msg: msg}
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if !isSpace(c) {
			return i
		}
	}
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// standardize returns a copy of data in which comments, trailing commas and
// a leading byte order mark are replaced by spaces. Newlines are kept and the
// length is unchanged, so offsets into the result are offsets into data.
func standardize(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		copy(out, "   ")
	}
	// Pass 1: comments.
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return nil, &syntaxError{offset: start, msg: "unterminated /* comment"}
			}
			end += i + 2 + 2
			for ; i < end; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	// Pass 2: a comma followed only by whitespace and then ] or }.
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ',':
			j := i + 1
			for j < len(out) && isSpace(out[j]) {
				j++
			}
			if j < len(out) && (out[j] == ']' || out[j] == '}') {
				out[i] = ' '
			}
		}
	}
	return out, nil
}

// position converts a byte offset in data to a 1-based line and column.
func position(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	line = 1
	lineStart := 0
	for i := 0; i < offset; i++ {
		if data[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	return line, utf8.RuneCount(data[lineStart:offset]) + 1
}
