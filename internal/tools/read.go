package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
)

//go:embed read.md
var readDescription string

type readTool struct{ env Env }

func (t *readTool) Name() string        { return "read" }
func (t *readTool) Description() string { return strings.TrimSpace(readDescription) }
func (t *readTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"path", typed("string", "Path of the file to read, relative to the working directory or absolute"), true},
		prop{"offset", typed("number", "1-based line number to start reading at"), false},
		prop{"limit", typed("number", "Maximum number of lines to return"), false},
	)
}

type readDetails struct {
	Truncation *Truncation `json:"truncation,omitempty"`
}

func (t *readTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("read", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	path, _, err := a.str("path", true)
	if err != nil {
		return errResult(err), nil
	}
	offset, hasOffset, err := a.integer("offset")
	if err != nil {
		return errResult(err), nil
	}
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if err := ctx.Err(); err != nil {
		return ErrorResult("Operation aborted"), nil
	}
	abs := resolvePath(path, t.env.Cwd)
	data, err := readFileChecked(abs)
	if err != nil {
		return ErrorResult(err.Error()), nil
	}
	if mime := detectImageMime(data); mime != "" {
		return Result{Content: []ai.Content{
			ai.Text(fmt.Sprintf("Read image file [%s]", mime)),
			ai.Image(base64.StdEncoding.EncodeToString(data), mime),
		}}, nil
	}

	text := strings.ToValidUTF8(string(data), "\uFFFD")
	lines := strings.Split(text, "\n")
	start := 0
	if hasOffset && offset > 0 {
		start = offset - 1
	}
	if start >= len(lines) {
		return ErrorResult(fmt.Sprintf("Offset %d is beyond end of file (%d lines total)", offset, len(lines))), nil
	}
	var selected string
	userLimited := -1
	if hasLimit {
		end := len(lines)
		if limit >= 0 && start+limit < end {
			end = start + limit
		}
		if end < start {
			end = start
		}
		selected = strings.Join(lines[start:end], "\n")
		userLimited = end - start
	} else {
		selected = strings.Join(lines[start:], "\n")
	}
	tr := TruncateHead(selected, 0, 0)
	first := start + 1
	var out string
	var det *readDetails
	switch {
	case tr.FirstLineExceedsLimit:
		out = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(len(lines[start])), FormatSize(DEFAULT_MAX_BYTES), first, path, DEFAULT_MAX_BYTES)
		det = &readDetails{Truncation: &tr}
	case tr.Truncated:
		last := first + tr.OutputLines - 1
		out = tr.Content
		if tr.TruncatedBy == "lines" {
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", first, last, len(lines), last+1)
		} else {
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Use offset=%d to continue.]",
				first, last, len(lines), FormatSize(DEFAULT_MAX_BYTES), last+1)
		}
		det = &readDetails{Truncation: &tr}
	case userLimited >= 0 && start+userLimited < len(lines):
		remaining := len(lines) - (start + userLimited)
		out = tr.Content + fmt.Sprintf("\n\n[%d more lines in file. Use offset=%d to continue.]", remaining, start+userLimited+1)
	default:
		out = tr.Content
	}
	res := TextResult(out)
	if det != nil {
		res.Details = details(det)
	}
	return res, nil
}

// readFileChecked reads a file, with Node-style error texts.
func readFileChecked(abs string) ([]byte, error) {
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fsError(err, "access", abs)
	}
	if st.IsDir() {
		return nil, errors.New("EISDIR: illegal operation on a directory, read")
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fsError(err, "open", abs)
	}
	return data, nil
}

// fsError phrases a file system error the way Node does, which is what the
// model sees from pi.
func fsError(err error, op, path string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("ENOENT: no such file or directory, %s '%s'", op, path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("EACCES: permission denied, %s '%s'", op, path)
	}
	return err
}

// detectImageMime recognises the image formats read returns as images.
func detectImageMime(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	case isBMP(b):
		return "image/bmp"
	}
	return ""
}

// isBMP checks the "BM" signature plus a plausible header, so that a text
// file that happens to start with "BM" is still read as text.
func isBMP(b []byte) bool {
	if len(b) < 26 || b[0] != 'B' || b[1] != 'M' {
		return false
	}
	if binary.LittleEndian.Uint32(b[6:10]) != 0 { // reserved fields
		return false
	}
	switch binary.LittleEndian.Uint32(b[14:18]) { // DIB header size
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}
