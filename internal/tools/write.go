package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

//go:embed write.md
var writeDescription string

type writeTool struct{ env Env }

func (t *writeTool) Name() string        { return "write" }
func (t *writeTool) Description() string { return strings.TrimSpace(writeDescription) }
func (t *writeTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"path", typed("string", "Path of the file to write, relative to the working directory or absolute"), true},
		prop{"content", typed("string", "The complete new content of the file"), true},
	)
}

func (t *writeTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("write", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	path, _, err := a.str("path", true)
	if err != nil {
		return errResult(err), nil
	}
	content, _, err := a.str("content", true)
	if err != nil {
		return errResult(err), nil
	}
	if ctx.Err() != nil {
		return ErrorResult("Operation aborted"), nil
	}
	abs := resolvePath(path, t.env.Cwd)
	if st, err := os.Stat(abs); err == nil && !st.IsDir() && !st.Mode().IsRegular() {
		return ErrorResult(errNotRegular(abs, st.Mode(), "write writes to").Error()), nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return ErrorResult(err.Error()), nil
	}
	if files := t.env.Files; files != nil && files.Write != nil {
		if err := files.Write(ctx, abs, content); err != nil {
			return ErrorResult(fmt.Sprintf("Cannot write %s: %v", path, err)), nil
		}
	} else if err := writeRegular(abs, []byte(content), 0o644, "write writes to"); err != nil {
		return ErrorResult(fsError(err, "open", abs).Error()), nil
	}
	// pi reports JavaScript's string length (UTF-16 code units).
	return TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", jsLength(content), path)), nil
}

// jsLength is the length of s as JavaScript counts it (UTF-16 code units).
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
