package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

//go:embed edit.md
var editDescription string

type editTool struct{ env Env }

func (t *editTool) Name() string        { return "edit" }
func (t *editTool) Description() string { return strings.TrimSpace(editDescription) }
func (t *editTool) Parameters() json.RawMessage {
	item := objectSchema(
		prop{"oldText", typed("string", "Exact text to replace; it must occur exactly once in the original file and must not overlap another edit's oldText"), true},
		prop{"newText", typed("string", "Text to put in its place"), true},
	)
	edits := `{"type":"array","description":"One or more replacements, each matched against the original file","items":` + string(item) + `}`
	return objectSchema(
		prop{"path", typed("string", "Path of the file to edit, relative to the working directory or absolute"), true},
		prop{"edits", edits, true},
	)
}

// editMaxBytes is the largest file edit works on: it holds the whole file,
// its normalised copies and the result in memory (a variable so tests can
// lower it).
var editMaxBytes int64 = 10 << 20

func editTooLarge(path string, size int64) string {
	what := "larger than " + FormatSize(int(editMaxBytes))
	if size >= 0 {
		what = fmt.Sprintf("%s (%d bytes)", FormatSize(int(size)), size)
	}
	return fmt.Sprintf("File too large to edit: %s is %s, over edit's limit of %s (%d bytes). Use bash (sed, or a script) to change it.",
		path, what, FormatSize(int(editMaxBytes)), editMaxBytes)
}

type editDetails struct {
	Diff             string `json:"diff"`
	Patch            string `json:"patch"`
	FirstChangedLine *int   `json:"firstChangedLine,omitempty"`
}

// parseEdits reads "edits" (an array, a single object, or an array encoded as
// a JSON string) plus the legacy top-level oldText/newText.
func parseEdits(a *args) ([]textEdit, error) {
	var list []json.RawMessage
	if raw, ok := a.present("edits"); ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
		}
		trimmed := strings.TrimSpace(string(raw))
		switch {
		case strings.HasPrefix(trimmed, "["):
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, a.fail("edits", "an array of {oldText, newText} objects")
			}
		case strings.HasPrefix(trimmed, "{"):
			list = []json.RawMessage{raw}
		default:
			return nil, a.fail("edits", "an array of {oldText, newText} objects")
		}
	}
	var edits []textEdit
	for i, raw := range list {
		ea, err := parseArgs("edit", raw)
		if err != nil {
			return nil, a.fail(fmt.Sprintf("edits[%d]", i), "an object with oldText and newText")
		}
		ea.tool = "edit"
		oldText, _, err := ea.str("oldText", true)
		if err != nil {
			return nil, a.fail(fmt.Sprintf("edits[%d].oldText", i), "a string")
		}
		newText, _, err := ea.str("newText", true)
		if err != nil {
			return nil, a.fail(fmt.Sprintf("edits[%d].newText", i), "a string")
		}
		edits = append(edits, textEdit{oldText, newText})
	}
	oldText, hasOld, err := a.str("oldText", false)
	if err != nil {
		return nil, err
	}
	newText, hasNew, err := a.str("newText", false)
	if err != nil {
		return nil, err
	}
	if hasOld && hasNew {
		edits = append(edits, textEdit{oldText, newText})
	} else if hasOld != hasNew && len(edits) == 0 {
		if hasOld {
			return nil, a.fail("newText", "a string")
		}
		return nil, a.fail("oldText", "a string")
	}
	if len(edits) == 0 {
		return nil, &argError{"Edit tool input is invalid. edits must contain at least one replacement."}
	}
	return edits, nil
}

func (t *editTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("edit", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	path, _, err := a.str("path", true)
	if err != nil {
		return errResult(err), nil
	}
	edits, err := parseEdits(a)
	if err != nil {
		return errResult(err), nil
	}
	if ctx.Err() != nil {
		return ErrorResult("Operation aborted"), nil
	}
	abs := resolvePath(path, t.env.Cwd)
	if files := t.env.Files; files != nil && files.Read != nil && files.Write != nil {
		if text, err := files.Read(ctx, abs); err == nil {
			return t.editText(ctx, files, abs, path, text, edits), nil
		}
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrorResult("File not found: " + path), nil
		}
		return ErrorResult(fsError(err, "access", abs).Error()), nil
	}
	if st.IsDir() {
		return ErrorResult("EISDIR: illegal operation on a directory, read"), nil
	}
	if !st.Mode().IsRegular() {
		return ErrorResult(errNotRegular(abs, st.Mode(), "edit edits").Error()), nil
	}
	if st.Size() > editMaxBytes {
		return ErrorResult(editTooLarge(path, st.Size())), nil
	}
	f, st, err := openRegular(abs, "edit edits")
	if err != nil {
		return ErrorResult(fsError(err, "open", abs).Error()), nil
	}
	data, err := readAllCapped(ctx, f, editMaxBytes, st.Size())
	f.Close()
	switch {
	case errors.Is(err, errAborted):
		return ErrorResult("Operation aborted"), nil
	case errors.Is(err, errTooLarge):
		return ErrorResult(editTooLarge(path, -1)), nil
	case err != nil:
		return ErrorResult(fsError(err, "open", abs).Error()), nil
	}
	bom, content := stripBOM(strings.ToValidUTF8(string(data), "\uFFFD"))
	ending := detectLineEnding(content)
	base, result, err := applyEdits(normalizeToLF(content), edits, path)
	if err != nil {
		return errResult(err), nil
	}
	if ctx.Err() != nil {
		return ErrorResult("Operation aborted"), nil
	}
	if err := writeRegular(abs, []byte(bom+restoreLineEndings(result, ending)), st.Mode().Perm(), "edit edits"); err != nil {
		return ErrorResult(fsError(err, "open", abs).Error()), nil
	}
	return editResult(path, base, result, len(edits)), nil
}

// editText edits text the tool's Files served and writes the result back
// through them.
func (t *editTool) editText(ctx context.Context, files *TextFiles, abs, path, text string, edits []textEdit) Result {
	if int64(len(text)) > editMaxBytes {
		return ErrorResult(editTooLarge(path, int64(len(text))))
	}
	bom, content := stripBOM(strings.ToValidUTF8(text, "\uFFFD"))
	ending := detectLineEnding(content)
	base, result, err := applyEdits(normalizeToLF(content), edits, path)
	if err != nil {
		return errResult(err)
	}
	if ctx.Err() != nil {
		return ErrorResult("Operation aborted")
	}
	if err := files.Write(ctx, abs, bom+restoreLineEndings(result, ending)); err != nil {
		return ErrorResult(fmt.Sprintf("Cannot write %s: %v", path, err))
	}
	return editResult(path, base, result, len(edits))
}

// editResult is edit's answer: the count, and the diff in the details.
func editResult(path, base, result string, n int) Result {
	diff, first := displayDiff(base, result, 4)
	det := editDetails{Diff: diff, Patch: unifiedPatch(path, base, result, 4)}
	if first > 0 {
		det.FirstChangedLine = &first
	}
	res := TextResult(fmt.Sprintf("Successfully replaced %d block(s) in %s.", n, path))
	res.Details = details(det)
	return res
}
