package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Shared output limits (pi's truncate.ts).
const (
	DEFAULT_MAX_LINES    = 2000
	DEFAULT_MAX_BYTES    = 50 * 1024
	GREP_MAX_LINE_LENGTH = 500
)

// TruncatedBy says which limit cut the output: "lines", "bytes" or "" (none,
// written as null).
type TruncatedBy string

// MarshalJSON writes "" as null.
func (t TruncatedBy) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return []byte(`"` + string(t) + `"`), nil
}

// Truncation describes a truncation; its JSON matches pi's TruncationResult.
type Truncation struct {
	Content               string      `json:"content"`
	Truncated             bool        `json:"truncated"`
	TruncatedBy           TruncatedBy `json:"truncatedBy"`
	TotalLines            int         `json:"totalLines"`
	TotalBytes            int         `json:"totalBytes"`
	OutputLines           int         `json:"outputLines"`
	OutputBytes           int         `json:"outputBytes"`
	LastLinePartial       bool        `json:"lastLinePartial"`
	FirstLineExceedsLimit bool        `json:"firstLineExceedsLimit"`
	MaxLines              int         `json:"maxLines"`
	MaxBytes              int         `json:"maxBytes"`
}

// FormatSize formats a byte count like pi: "512B", "50.0KB", "1.5MB".
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}

func limitsOrDefault(maxLines, maxBytes int) (int, int) {
	if maxLines <= 0 {
		maxLines = DEFAULT_MAX_LINES
	}
	if maxBytes <= 0 {
		maxBytes = DEFAULT_MAX_BYTES
	}
	return maxLines, maxBytes
}

// TruncateHead keeps the first lines of content that fit in maxLines lines
// and maxBytes bytes (0 means the default). It never returns a partial line:
// if the first line alone is over the byte limit the content is empty and
// FirstLineExceedsLimit is set.
func TruncateHead(content string, maxLines, maxBytes int) Truncation {
	maxLines, maxBytes = limitsOrDefault(maxLines, maxBytes)
	lines := strings.Split(content, "\n")
	t := Truncation{
		TotalLines: len(lines), TotalBytes: len(content),
		MaxLines: maxLines, MaxBytes: maxBytes,
	}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated = true
	if len(lines[0]) > maxBytes {
		t.TruncatedBy = "bytes"
		t.FirstLineExceedsLimit = true
		return t
	}
	t.TruncatedBy = "lines"
	n, size := 0, 0
	for i := 0; i < len(lines) && i < maxLines; i++ {
		add := len(lines[i])
		if i > 0 {
			add++
		}
		if size+add > maxBytes {
			t.TruncatedBy = "bytes"
			break
		}
		size += add
		n++
	}
	if n >= maxLines && size <= maxBytes {
		t.TruncatedBy = "lines"
	}
	t.Content = strings.Join(lines[:n], "\n")
	t.OutputLines, t.OutputBytes = n, len(t.Content)
	return t
}

// TruncateTail keeps the last lines of content that fit in the limits. When
// the last line alone is over the byte limit, its end is kept (cut on a UTF-8
// character boundary) and LastLinePartial is set.
func TruncateTail(content string, maxLines, maxBytes int) Truncation {
	maxLines, maxBytes = limitsOrDefault(maxLines, maxBytes)
	lines := strings.Split(content, "\n")
	t := Truncation{
		TotalLines: len(lines), TotalBytes: len(content),
		MaxLines: maxLines, MaxBytes: maxBytes,
	}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated = true
	t.TruncatedBy = "lines"
	start, n, size := len(lines), 0, 0
	partial := ""
	for i := len(lines) - 1; i >= 0 && n < maxLines; i-- {
		add := len(lines[i])
		if n > 0 {
			add++
		}
		if size+add > maxBytes {
			t.TruncatedBy = "bytes"
			if n == 0 {
				partial = tailBytes(lines[i], maxBytes)
				size = len(partial)
				t.LastLinePartial = true
				n = 1
			}
			break
		}
		size += add
		n++
		start = i
	}
	if n >= maxLines && size <= maxBytes {
		t.TruncatedBy = "lines"
	}
	if t.LastLinePartial {
		t.Content = partial
	} else {
		t.Content = strings.Join(lines[start:], "\n")
	}
	t.OutputLines, t.OutputBytes = n, len(t.Content)
	return t
}

// tailBytes returns at most max bytes from the end of s, starting on a
// character boundary.
func tailBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// headBytes returns at most max bytes from the start of s, ending on a
// character boundary.
func headBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// TruncateLine cuts a line to maxChars characters (0 = GREP_MAX_LINE_LENGTH)
// and appends "... [truncated]".
func TruncateLine(line string, maxChars int) (string, bool) {
	if maxChars <= 0 {
		maxChars = GREP_MAX_LINE_LENGTH
	}
	if utf8.RuneCountInString(line) <= maxChars {
		return line, false
	}
	n := 0
	for i := range line {
		if n == maxChars {
			return line[:i] + "... [truncated]", true
		}
		n++
	}
	return line, false
}
